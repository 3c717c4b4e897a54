package sim_test

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gpusim/scenarios"
	"gpusim/sim"
)

var speedCases = flag.String("sim.speed", "", "compare the flow solver's speed with SimGrid's on the benchmark cases: "+
	"\"all\", or a comma-separated list of case names (see TestSimGridSpeed)")

// speedCase is a flow case of the performance comparison, named
// LINKS-links-FLOWS-flows: a random tree of about LINKS links (gen_cases.py's
// switches + leaves) with FLOWS transfers started over 50 ms.
type speedCase struct {
	seed             uint64
	switches, leaves int
	flows            int
}

func (c speedCase) name() string {
	return fmt.Sprintf("%d-links-%d-flows", c.switches+c.leaves-1, c.flows)
}

// benchCases are the cases of docs/performance.md: trees of 100 to 1,000
// links, 1,000 to 20,000 transfers.
var benchCases = []speedCase{
	{11, 20, 80, 1000},
	{11, 50, 200, 1000},
	{11, 50, 200, 2000},
	{12, 100, 400, 2000},
	{11, 50, 200, 5000},
	{13, 300, 700, 5000},
	{14, 100, 400, 10000},
	{8, 300, 700, 20000},
}

// TestSimGridSpeed runs each selected case through gpusim's solver and the
// SimGrid runner, one after the other, and prints both wall times (SimGrid's
// own simgrid_wall_s, which excludes its start-up and parsing; gpusim's
// sim.RunOptions, which excludes loading the YAML, without load series as a
// sweep runs, unless -sim.speed-series), their ratio, and the largest
// relative difference between the finish times. Run it with
//
//	go test ./sim -run TestSimGridSpeed -sim.speed all -timeout 2h -v
//
// (sim/testdata/simgrid/compare.sh does). SimGrid is skipped on cases where
// a previous case of the run took it over -sim.speed-limit. With
// -sim.speed-repeat N each case runs N times, gpusim and SimGrid
// alternating, and the times printed are each engine's median: the two
// run at different moments, and on a machine whose speed moves a single
// pair's ratio moves with it (0.15 to 0.29 for one case within an hour).
func TestSimGridSpeed(t *testing.T) {
	if *speedCases == "" {
		t.Skip("a measurement, not a test: run with -sim.speed all")
	}
	runner := ""
	if *speedSimGrid {
		runner = simgridRunner(t)
	}
	want := map[string]bool{}
	for _, n := range strings.Split(*speedCases, ",") {
		want[strings.TrimSpace(n)] = true
	}
	fmt.Printf("%-24s %8s %12s %12s %8s %10s\n", "case", "solves", "gpusim_s", "simgrid_s", "ratio", "max_rel_err")
	repeat := max(*speedRepeat, 1)
	skipSimGrid := !*speedSimGrid
	for _, sc := range benchCases {
		if !want["all"] && !want[sc.name()] {
			continue
		}
		c := genCase(sc.seed, sc.switches, sc.leaves, sc.flows, 0.05)
		topo, scen := c.gpusimFiles()
		s, err := scenarios.Load("flows.yaml", []byte(scen), scenarios.Options{ReadFile: func(string) ([]byte, error) { return []byte(topo), nil }})
		if err != nil {
			t.Fatal(err)
		}
		var gpusimWalls, simgridWalls []float64
		var res *sim.Result
		worst := math.NaN()
		runSimGrid := !skipSimGrid
		for k := 0; k < repeat; k++ {
			t0 := time.Now()
			r, err := sim.RunOptions(s.Topology.Machine, s.Program, sim.Options{NoLoadSeries: !*speedSeries})
			gpusimWalls = append(gpusimWalls, time.Since(t0).Seconds())
			if err != nil {
				t.Fatal(err)
			}
			res = r
			if !runSimGrid {
				continue
			}
			finish, wall := runSimgridTimed(t, runner, c.simgridInput())
			simgridWalls = append(simgridWalls, wall)
			if k > 0 {
				continue // the same finish times every run
			}
			got := map[string]float64{}
			for _, r := range res.Ops {
				if r.Kind == sim.OpCopy {
					got[r.ID] = r.End.Seconds()
				}
			}
			worst = 0
			for id, w := range finish {
				worst = math.Max(worst, math.Abs(got[id]-w)/w)
			}
			if wall > *speedLimit {
				skipSimGrid = true
				runSimGrid = false // not again, on this case or the next
			}
		}
		gpusimWall, simgridWall := median(gpusimWalls), math.NaN()
		if len(simgridWalls) > 0 {
			simgridWall = median(simgridWalls)
		}
		fmt.Printf("%-24s %8d %12.3f %12.3f %8.3f %10.2g\n", sc.name(), res.Solves, gpusimWall, simgridWall, gpusimWall/simgridWall, worst)
		if worst >= 1e-6 {
			t.Errorf("%s: finish times differ from SimGrid's by up to %.3g (relative), want < 1e-6", sc.name(), worst)
		}
	}
}

var (
	speedLimit   = flag.Float64("sim.speed-limit", 120, "seconds of SimGrid time after which TestSimGridSpeed stops running SimGrid")
	speedSimGrid = flag.Bool("sim.speed-simgrid", true, "run SimGrid in TestSimGridSpeed (false: time gpusim alone)")
	speedSeries  = flag.Bool("sim.speed-series", false, "record load series in TestSimGridSpeed's gpusim runs (as traces and plots need; off as in a sweep)")
	speedRepeat  = flag.Int("sim.speed-repeat", 1, "run each case of TestSimGridSpeed this many times, gpusim and SimGrid alternating, and print each one's median time")
)

// runSimgridTimed returns each flow's finish time and the runner's
// simgrid_wall_s.
func runSimgridTimed(t *testing.T, runner, input string) (map[string]float64, float64) {
	t.Helper()
	cmd := exec.Command(runner)
	cmd.Stdin = strings.NewReader(input)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("simgrid runner: %v: %s", err, errb.String())
	}
	finish := map[string]float64{}
	for _, line := range strings.Split(out.String(), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		v, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			t.Fatalf("simgrid output %q: %v", line, err)
		}
		finish[f[0]] = v
	}
	wall := math.NaN()
	for _, line := range strings.Split(errb.String(), "\n") {
		if rest, ok := strings.CutPrefix(line, "simgrid_wall_s "); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				wall, _ = strconv.ParseFloat(f[0], 64)
			}
		}
	}
	return finish, wall
}

// median returns the median of xs (the mean of the middle two for an even
// count); xs is sorted in place.
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

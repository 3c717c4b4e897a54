package sim_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"gpusim/scenarios"
	"gpusim/sim"
	"gpusim/topologies"
)

// flowCase is a random tree with flows between leaves, in the format of the
// SimGrid runner (testdata/simgrid/flows.cpp), generated the way
// gen_cases.py does: switches s0..s{K-1} (s0 the root), leaves g0..g{L-1},
// one full-duplex link per edge named after its child, zero latencies.
type flowCase struct {
	parent map[string]string
	order  []string // children in creation order
	bw     map[string]float64
	flows  []caseFlow
	leaves int
}

type caseFlow struct {
	id       string
	start    float64 // seconds, 9 decimals
	bytes    int64
	src, dst int
}

func genCase(seed uint64, switches, leaves, flows int, span float64) *flowCase {
	r := rand.New(rand.NewPCG(seed, 7))
	bws := []float64{8e9, 16e9, 25e9, 32e9, 50e9, 64e9, 100e9, 200e9, 450e9}
	c := &flowCase{parent: map[string]string{}, bw: map[string]float64{}, leaves: leaves}
	for i := 1; i < switches; i++ {
		n := fmt.Sprintf("s%d", i)
		c.parent[n] = fmt.Sprintf("s%d", r.IntN(i))
		c.order = append(c.order, n)
	}
	for i := 0; i < leaves; i++ {
		n := fmt.Sprintf("g%d", i)
		c.parent[n] = fmt.Sprintf("s%d", r.IntN(switches))
		c.order = append(c.order, n)
	}
	for _, n := range c.order {
		c.bw[n] = bws[r.IntN(len(bws))]
	}
	for f := 0; f < flows; f++ {
		src := r.IntN(leaves)
		dst := r.IntN(leaves - 1)
		if dst >= src {
			dst++
		}
		size := int64(math.Exp(math.Log(1e6) + r.Float64()*(math.Log(1e9)-math.Log(1e6))))
		start := math.Round(r.Float64()*span*1e9) / 1e9
		c.flows = append(c.flows, caseFlow{fmt.Sprintf("f%d", f), start, size, src, dst})
	}
	return c
}

func (c *flowCase) toRoot(n string) []string {
	path := []string{n}
	for {
		p, ok := c.parent[n]
		if !ok {
			return path
		}
		n = p
		path = append(path, n)
	}
}

// simgridInput writes the case in the runner's format.
func (c *flowCase) simgridInput() string {
	var b strings.Builder
	for _, n := range c.order {
		fmt.Fprintf(&b, "link %s %.0f 0\n", n, c.bw[n])
	}
	for _, f := range c.flows {
		src, dst := fmt.Sprintf("g%d", f.src), fmt.Sprintf("g%d", f.dst)
		up, down := c.toRoot(src), c.toRoot(dst)
		inDown := map[string]int{}
		for i, n := range down {
			inDown[n] = i
		}
		var hops []string
		lca := 0
		for i, n := range up {
			if _, ok := inDown[n]; ok {
				lca = i
				break
			}
		}
		for _, n := range up[:lca] {
			hops = append(hops, n+":up")
		}
		d := inDown[up[lca]]
		for i := d - 1; i >= 0; i-- {
			hops = append(hops, down[i]+":down")
		}
		fmt.Fprintf(&b, "flow %s %.9f %d %s %s %s\n", f.id, f.start, f.bytes, src, dst, strings.Join(hops, " "))
	}
	return b.String()
}

// gpusimFiles writes the case as a topology and a scenario: every leaf is a
// GPU, every flow a peer copy on a stream of its own, started by a thread of
// its own after a host op as long as its start time. API, copy and kernel
// overheads are zero, and copy engines plentiful, so only the flow model acts.
func (c *flowCase) gpusimFiles() (topo, scen string) {
	var t strings.Builder
	t.WriteString("name: tree\nhosts: [{name: cpu0, api_overhead: 0 us}]\ngpus:\n")
	for i := 0; i < c.leaves; i++ {
		fmt.Fprintf(&t, "  - {name: g%d, model: H100-SXM, copy_overhead: 0 us, copy_engines: 4096}\n", i)
	}
	t.WriteString("switches:\n  - {name: s0}\n")
	for _, n := range c.order {
		if n[0] == 's' {
			fmt.Fprintf(&t, "  - {name: %s}\n", n)
		}
	}
	t.WriteString("links:\n  - {ends: [cpu0, s0], bandwidth: 1 GB/s}\n")
	for _, n := range c.order {
		fmt.Fprintf(&t, "  - {name: \"link:%s\", ends: [%s, %s], bandwidth: %.0f B/s, kind: pcie}\n", n, n, c.parent[n], c.bw[n])
	}
	var s strings.Builder
	s.WriteString("name: flows\ntopology: topo.yaml\nthreads:\n")
	for _, f := range c.flows {
		fmt.Fprintf(&s, "  - {name: t%s, ops: [{host: {duration: %.9f s}}, {copy: {id: %s, from: g%d, to: g%d, bytes: %d, stream: g%d/%s}}]}\n",
			f.id, f.start, f.id, f.src, f.dst, f.bytes, f.src, f.id)
	}
	return t.String(), s.String()
}

var (
	runnerOnce sync.Once
	runnerPath string
	runnerErr  error
)

// simgridRunner builds testdata/simgrid/flows.cpp once, or says why it cannot.
func simgridRunner(t *testing.T) string {
	t.Helper()
	runnerOnce.Do(func() {
		if _, err := exec.LookPath("g++"); err != nil {
			runnerErr = fmt.Errorf("g++ not found")
			return
		}
		dir, err := os.MkdirTemp("", "gpusim-simgrid")
		if err != nil {
			runnerErr = err
			return
		}
		out := filepath.Join(dir, "flows")
		cmd := exec.Command("g++", "-O2", "-std=c++17", "-o", out, "testdata/simgrid/flows.cpp", "-lsimgrid")
		if msg, err := cmd.CombinedOutput(); err != nil {
			runnerErr = fmt.Errorf("cannot build the SimGrid runner (apt-get install -y libsimgrid-dev g++): %v: %s", err, firstLines(string(msg), 3))
			return
		}
		runnerPath = out
	})
	if runnerErr != nil {
		if os.Getenv("GPUSIM_REQUIRE_SIMGRID") != "" {
			t.Fatalf("SimGrid reference required (GPUSIM_REQUIRE_SIMGRID) but unavailable: %v", runnerErr)
		}
		t.Skipf("SimGrid reference unavailable: %v", runnerErr)
	}
	return runnerPath
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, " | ")
}

// runSimgrid returns each flow's finish time in seconds.
func runSimgrid(t *testing.T, runner, input string) map[string]float64 {
	t.Helper()
	finish, _ := runSimgridTimed(t, runner, input)
	return finish
}

// runGpusim runs the case through the YAML loaders, the simulator and the
// --json writer, and returns each copy's end time in seconds read back from
// the JSON.
func runGpusim(t *testing.T, c *flowCase) map[string]float64 {
	t.Helper()
	topo, scen := c.gpusimFiles()
	sc, err := scenarios.Load("flows.yaml", []byte(scen), scenarios.Options{ReadFile: func(string) ([]byte, error) { return []byte(topo), nil }})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	res, err := sim.Run(sc.Topology.Machine, sc.Program)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	var buf bytes.Buffer
	if err := sim.WriteJSON(&buf, res); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Ops []struct {
			ID    string  `json:"id"`
			Kind  string  `json:"kind"`
			EndNS float64 `json:"end_ns"`
		} `json:"ops"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("json: %v", err)
	}
	out := map[string]float64{}
	for _, o := range doc.Ops {
		if o.Kind == "copy" {
			out[o.ID] = o.EndNS * 1e-9
		}
	}
	_ = topologies.Shipped
	return out
}

// TestFlowModelAgreesWithSimGrid compares every transfer's finish time with
// SimGrid's CM02 model (zero latencies: pure max-min sharing) on random trees.
func TestFlowModelAgreesWithSimGrid(t *testing.T) {
	runner := simgridRunner(t)
	cases := []struct {
		seed                    uint64
		switches, leaves, flows int
	}{
		{1, 3, 4, 5}, {2, 10, 20, 100}, {3, 20, 40, 200}, {4, 5, 50, 300}, {5, 50, 100, 1000},
	}
	if testing.Short() {
		cases = cases[:3]
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("seed%d-%dflows", tc.seed, tc.flows), func(t *testing.T) {
			c := genCase(tc.seed, tc.switches, tc.leaves, tc.flows, 0.05)
			want := runSimgrid(t, runner, c.simgridInput())
			got := runGpusim(t, c)
			worst, worstID := 0.0, ""
			for _, f := range c.flows {
				w, ok := want[f.id]
				if !ok {
					t.Fatalf("simgrid has no finish for %s", f.id)
				}
				rel := math.Abs(got[f.id]-w) / w
				if rel > worst {
					worst, worstID = rel, f.id
				}
			}
			if worst >= 1e-6 {
				t.Errorf("largest relative error %.3g on %s (gpusim %.12g s, simgrid %.12g s), want < 1e-6", worst, worstID, got[worstID], want[worstID])
			}
			t.Logf("%d flows, largest relative error %.2g", len(c.flows), worst)
		})
	}
}

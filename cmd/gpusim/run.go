package main

import (
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"time"

	"gpusim/scenarios"
	"gpusim/sim"
	"gpusim/topologies"
)

const runSynopsis = "gpusim run SCENARIO [--set k=v]... [--backend sim|hw] [--topology FILE] [--json] [--trace FILE] [--plot DIR] [--from T] [--to T] [--strict] [--max-ops N]"

func cmdRun(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("run", runSynopsis, stderr)
	set := setFlag{}
	fs.Var(set, "set", "override a scenario var: name=value (repeatable)")
	asJSON := fs.Bool("json", false, "print one JSON document with every op instead of the summary")
	trace := fs.String("trace", "", "write a Chrome/Perfetto trace to `FILE` (open it in ui.perfetto.dev)")
	plotTo := fs.String("plot", "", "write timeline.png, timeline.svg and utilization.png into `DIR`")
	var from, to timeFlag
	fs.Var(&from, "from", "with --plot or --trace: start the timeline and utilization (the trace) at this time, such as 1.5ms")
	fs.Var(&to, "to", "with --plot or --trace: end the timeline and utilization (the trace) at this time (default: the end of the run)")
	strict := fs.Bool("strict", false, "treat warnings as errors (exit status 2)")
	maxOps := fs.Int64("max-ops", scenarios.DefaultMaxOps, "refuse scenarios that expand to more than `N` ops")
	backend := fs.String("backend", "sim", "`sim` simulates; hw runs the scenario on this machine's GPUs (GPU i of the topology is device i)")
	topo := fs.String("topology", "", "use this topology `FILE` (or shipped name) instead of the scenario's")
	if helpRequested(fs, runSynopsis, args, stdout) {
		return nil
	}
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := oneArg("run", runSynopsis, "SCENARIO", "a scenario file, or a shipped name such as quickstart", pos, set); err != nil {
		return err
	}
	if err := checkMaxOps("run", *maxOps); err != nil {
		return err
	}
	if err := notADirectory(*trace); err != nil {
		return err // before the run, not after it
	}
	if err := plotDirUsable("run", *plotTo); err != nil {
		return err // before the run, not after it
	}
	if (from.set || to.set) && *plotTo == "" && *trace == "" {
		return &usageError{"gpusim run: --from and --to choose the window of --plot DIR and --trace FILE; add one"}
	}
	if *backend != "sim" && *backend != "hw" {
		return &usageError{fmt.Sprintf("gpusim run: --backend %q: want sim or hw", *backend)}
	}
	var top *topologies.Topology
	if *topo != "" {
		t, err := loadTopology(*topo)
		if err != nil {
			return err
		}
		top = t
	}
	// Refused before the loader expands them, on either backend: the
	// hardware's run keeps a record of each op too.
	opt := scenarios.Options{Set: set, MaxOps: *maxOps, Topology: top, MemoryOps: memoryOps()}
	sc, err := loadScenarioWith(pos[0], opt)
	if err != nil {
		return asMemoryFailure(err, "")
	}
	// The scenario, and the topology file it or --topology names.
	if err := notAnInput("run", "trace", *trace, pos[0], *topo, sc.Topology.File); err != nil {
		return err
	}
	if err := checkMemory(sc); err != nil {
		return err
	}
	var res *sim.Result
	var runErr error
	if *backend == "hw" {
		if res, _, runErr = runOnGPU(sc, stderr); runErr != nil {
			return runErr
		}
	} else {
		// Only traces and plots draw the load series.
		opt := sim.Options{NoLoadSeries: *trace == "" && *plotTo == "", CollLinks: *trace != ""}
		line := newRunProgress(stderr)
		if line.on {
			opt.Progress = line.report
		}
		res, runErr = sim.RunOptions(sc.Topology.Machine, sc.Program, opt)
		line.finish()
	}
	var dl *sim.DeadlockError
	if over := (*sim.OverflowError)(nil); errors.As(runErr, &over) && over.Where != "" {
		return runErr // it names its op's file, line and column
	}
	if runErr != nil && !errors.As(runErr, &dl) {
		return fmt.Errorf("%s: %v", sc.File, runErr)
	}
	// What is said of the file comes first, as part of the run's
	// warnings (--json and --strict count it).
	res.Warnings = append(slices.Clip(sc.Warnings), res.Warnings...)
	printWarnings(stderr, res.Warnings)
	if *trace != "" {
		if err := checkWindow(res, from, to); err != nil {
			return err
		}
		end := sim.MaxTime
		if to.set {
			end = to.t
		}
		if *plotTo != "" {
			// Made first: the trace may go into it (--plot out --trace
			// out/trace.json).
			if err := plotDir(*plotTo); err != nil {
				return err
			}
		}
		if err := writeFileAtomic(*trace, func(w io.Writer) error { return sim.WriteTraceWindow(w, res, from.t, end) }); err != nil {
			return err
		}
	}
	if *plotTo != "" {
		// A deadlocked run is drawn too: its timeline shows who waits.
		if err := plotRun(*plotTo, res, from, to, *backend == "hw"); err != nil {
			return err
		}
	}
	if dl != nil {
		if *asJSON {
			// The run up to the deadlock, its stuck ops "unfinished",
			// for a program to read; the report on stderr, exit 2.
			if err := sim.WriteJSON(stdout, res); err != nil {
				return &failError{err}
			}
		}
		if dl.Where != "" {
			return dl
		}
		return fmt.Errorf("%s: %v", sc.File, dl)
	}
	if *asJSON {
		if err := sim.WriteJSON(stdout, res); err != nil {
			return &failError{err}
		}
	} else {
		writeSummary(stdout, sc, res)
	}
	if *strict && len(res.Warnings) > 0 {
		return fmt.Errorf("%s: --strict makes %s above an error", sc.File, plural(len(res.Warnings), "the warning", "the %d warnings"))
	}
	return nil
}

// loadScenarioWith reads a scenario file, or a shipped scenario by name
// when no such file exists, and loads it with opt (ReadFile is set here).
func loadScenarioWith(name string, opt scenarios.Options) (*scenarios.Scenario, error) {
	file, data, readFile, err := readScenario(name)
	if err != nil {
		return nil, err
	}
	opt.ReadFile = readFile
	if opt.PlanTasks == 0 {
		opt.PlanTasks = planTasksFor(opt.MemoryOps)
	}
	return scenarios.Load(file, data, opt)
}

// scenarioSource is a scenario file read and parsed once, for the many
// loads of a sweep's points.
type scenarioSource struct {
	src      *scenarios.Source
	readFile func(string) ([]byte, error)
}

// openScenario reads and parses a scenario as loadScenarioWith does.
func openScenario(name string) (*scenarioSource, error) {
	file, data, readFile, err := readScenario(name)
	if err != nil {
		return nil, err
	}
	src, err := scenarios.Parse(file, data)
	if err != nil {
		return nil, err
	}
	return &scenarioSource{src: src, readFile: readFile}, nil
}

// load loads the scenario with opt (ReadFile is set here); loads may run
// at once.
func (s *scenarioSource) load(opt scenarios.Options) (*scenarios.Scenario, error) {
	opt.ReadFile = s.readFile
	if opt.PlanTasks == 0 {
		opt.PlanTasks = planTasksFor(opt.MemoryOps)
	}
	return s.src.Load(opt)
}

// readScenario reads a scenario file, or a shipped scenario by name when
// no such file exists: the name to load it as, its text, and the reader of
// the topology it names.
func readScenario(name string) (string, []byte, func(string) ([]byte, error), error) {
	data, err := readInput(name)
	var big *tooLargeError
	if errors.As(err, &big) {
		return "", nil, nil, err
	}
	if err != nil {
		if notThere(err, name) {
			if src, ok := scenarios.ShippedSource(strings.TrimSuffix(name, ".yaml")); ok && !strings.Contains(name, "/") {
				// A shipped scenario names its topology by a path beside it
				// in the repository; serve those from the embedded copies.
				readFile := func(p string) ([]byte, error) {
					if b, ok := topologies.ShippedSource(strings.TrimSuffix(path.Base(p), ".yaml")); ok {
						return b, nil
					}
					return readInput(p)
				}
				return path.Join("scenarios", strings.TrimSuffix(name, ".yaml")+".yaml"), src, readFile, nil
			}
			if _, ok := topologies.ShippedSource(strings.TrimSuffix(name, ".yaml")); ok && !strings.Contains(name, "/") {
				return "", nil, nil, fmt.Errorf("%s: a shipped topology, not a scenario: a scenario names it in its topology: field, and gpusim topo show %s shows it", name, name)
			}
			return "", nil, nil, fmt.Errorf("%s: no such file (shipped scenarios: %s)", name, strings.Join(scenarios.Shipped(), ", "))
		}
		return "", nil, nil, fmt.Errorf("%s: cannot read: %v", name, unwrapPath(err))
	}
	return name, data, readInput, nil
}

// runProgress is the line a long run keeps on a terminal's stderr: from 2 s
// on, the simulated time and the events so far, redrawn each second and
// blanked at the end.
type runProgress struct {
	w           io.Writer
	on          bool
	start, last time.Time
	width       int
}

func newRunProgress(w io.Writer) *runProgress {
	return &runProgress{w: w, start: time.Now(), on: isTerminal(w)}
}

func (p *runProgress) report(simulated sim.Time, events uint64) {
	now := time.Now()
	if now.Sub(p.start) < 2*time.Second || now.Sub(p.last) < time.Second {
		return
	}
	p.last = now
	redraw(p.w, fmt.Sprintf("simulating: %s simulated, %d million events, %s", simulated, events/1_000_000, now.Sub(p.start).Round(time.Second)), &p.width)
}

func (p *runProgress) finish() {
	if p.width > 0 {
		fmt.Fprint(p.w, "\r"+strings.Repeat(" ", p.width)+"\r")
	}
}

// printWarnings writes each warning of the lists on a line of its own,
// as "warning: ...".
func printWarnings(w io.Writer, lists ...[]string) {
	for _, l := range lists {
		for _, s := range l {
			fmt.Fprintln(w, "warning: "+s)
		}
	}
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"gpusim/calibrate"
	"gpusim/hw"
	"gpusim/internal/units"
	"gpusim/models"
	"gpusim/plots"
	"gpusim/scenarios"
	"gpusim/sim"
	"gpusim/topologies"
)

// exitNoGPU is the exit status when a command needs a GPU and none can be
// used (no driver library, no device, no permission).
const exitNoGPU = 3

// openDriver opens the CUDA driver; tests replace it with a fake.
var openDriver = hw.Open

// discoverGPUs describes, through NVML, the GPUs at the given PCI addresses
// (nil: all, in NVML's order), with NVML's own error; tests replace it.
var discoverGPUs = discoverVisible

// cudaBusIDs is the PCI address of each of the n GPUs the CUDA driver shows,
// in its order; nil where the driver does not say.
func cudaBusIDs(drv hw.Driver, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		var v [3]int
		for k, a := range []hw.Attr{hw.AttrPCIDomain, hw.AttrPCIBus, hw.AttrPCIDevice} {
			x, err := drv.Attribute(i, a)
			if err != nil {
				return nil
			}
			v[k] = x
		}
		ids[i] = fmt.Sprintf("%08x:%02x:%02x.0", v[0], v[1], v[2])
	}
	return ids
}

// fakeGPU is the machine the fake driver of the command tests pretends to
// be: an H100-class GPU with round numbers.
func fakeGPU() hw.FakeConfig {
	us := time.Microsecond
	return hw.FakeConfig{
		Devices: 1, Name: "Fake H100", SMs: 132,
		APICost: 2 * us, Latency: 3 * us, KernelOverhead: 2 * us,
		H2D:             hw.FakePath{Latency: 3 * us, Bandwidth: 50e9},
		D2H:             hw.FakePath{Latency: 3 * us, Bandwidth: 50e9},
		D2D:             hw.FakePath{Latency: 2 * us, Bandwidth: 1400e9},
		Peer:            hw.FakePath{Latency: 2 * us, Bandwidth: 300e9},
		Pageable:        hw.FakePath{Latency: 10 * us, Bandwidth: 15e9},
		MemoryBandwidth: 2900e9, FLOPS: 50e12,
	}
}

// interruptible returns a context cancelled by SIGINT or SIGTERM, so GPU
// work stops between ops and everything allocated is freed. The first
// signal cancels; after it the signals are let go, so a second one ends the
// process even if a driver call never returns.
func interruptible() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop)
	return ctx, stop
}

// runOnGPU runs a scenario on the GPUs, printing what the backend noticed.
func runOnGPU(sc *scenarios.Scenario, stderr io.Writer) (*sim.Result, *hw.Info, error) {
	runs, info, err := runOnGPUTimes(sc, 1, nil, nil, nil, stderr)
	if err != nil {
		return nil, nil, err
	}
	return runs[0], info, nil
}

// runOnGPUTimes runs a scenario n times on the GPUs. A program that
// deadlocks in the simulator is refused: on the GPUs it would wait forever.
// ready, if not nil, runs once the driver is open, before the GPUs are used
// (to prepare outputs only when there is a GPU to fill them); before, if
// not nil, runs before each run i (as a probe of the host) on the devices
// beforeGPUs, whose contexts are held with the runs'. A failure of
// the GPU or the driver, or an interrupt, is an environment failure (exit
// status 1); what the scenario asks that the machine cannot do is its
// input's (2).
func runOnGPUTimes(sc *scenarios.Scenario, n int, ready func() error, before func(ctx context.Context, drv hw.Driver, i int) error, beforeGPUs []int, stderr io.Writer) ([]*sim.Result, *hw.Info, error) {
	if err := hw.Runnable(sc.Program); err != nil {
		return nil, nil, err // it names the op's file, line and column
	}
	var dl *sim.DeadlockError
	if _, err := sim.Run(sc.Topology.Machine, sc.Program); errors.As(err, &dl) {
		return nil, nil, fmt.Errorf("%s: not run on the GPU: %v", sc.File, err)
	}
	drv, err := openDriver()
	if err != nil {
		return nil, nil, err
	}
	defer drv.Close()
	if ready != nil {
		if err := ready(); err != nil {
			return nil, nil, err
		}
	}
	// The contexts of the GPUs the runs and before use stay made from one
	// run to the next (each run would make and destroy them); where
	// holding them fails, each run says why.
	if gpus, err := hw.UsedGPUs(sc.Topology.Machine, sc.Program); err == nil {
		if release, err := hw.Hold(drv, append(gpus, beforeGPUs...)); err == nil {
			defer release()
		}
	}
	ctx, stop := interruptible()
	defer stop()
	var runs []*sim.Result
	var info *hw.Info
	var drift []time.Duration // per GPU, the event clock's, largest of the runs
	for i := 0; i < n; i++ {
		var res *sim.Result
		var inf *hw.Info
		if before != nil {
			err = before(ctx, drv, i)
		}
		if err == nil {
			res, inf, err = hw.Run(ctx, drv, sc.Topology.Machine, sc.Program, hw.Options{HostFree: freeHostMemory})
		}
		if err != nil {
			var ce *hw.CUDAError
			switch {
			case errors.Is(err, context.Canceled):
				return nil, nil, &failError{fmt.Errorf("%s: interrupted; everything allocated on the GPUs was freed", sc.File)}
			case errors.As(err, &ce), errors.Is(err, hw.ErrHostMemory):
				// The machine's state, not the scenario's fault: exit 1.
				return nil, nil, &failError{fmt.Errorf("%s: on the GPU: %w", sc.File, err)}
			}
			return nil, nil, fmt.Errorf("%s: on the GPU: %w", sc.File, err)
		}
		runs, info = append(runs, res), inf
		// The largest drift of any run, where several ran.
		if drift == nil {
			drift = slices.Clone(inf.Drift)
		}
		for g, d := range inf.Drift {
			if d.Abs() > drift[g].Abs() {
				drift[g] = d
			}
		}
	}
	for g, name := range info.Devices {
		if name != "" {
			fmt.Fprintf(stderr, "hw: %s is %s (driver CUDA %d.%d); event clock on the host clock within %s, moved %s against it by the end of the run%s; kernel fixed cost %s (as kernels are timed: %s), spin overshoot %s\n",
				sc.Topology.Machine.GPUs[g].Name, name, info.DriverVersion/1000, info.DriverVersion%1000/10, info.Align[g], drift[g], plural(n, "", " (the most of the %d runs)"), info.SpinOverhead[g], info.SpinOverheadStamped[g], info.SpinOvershoot[g])
		}
	}
	var placed []string
	for h, node := range info.HostNodes {
		if node >= 0 {
			placed = append(placed, fmt.Sprintf("%s on node %d", sc.Topology.Machine.Hosts[h].Name, node))
		}
	}
	if len(placed) > 0 {
		fmt.Fprintf(stderr, "hw: threads and host memory on this machine's NUMA nodes where the topology's GPUs are: %s\n", strings.Join(placed, ", "))
	}
	return runs, info, nil
}

const replaySynopsis = "gpusim replay SCENARIO [--topology FILE] [--set k=v]... [--repeat N] [--host-probe] [--json] [--plot DIR] [--top N] [--max-ops N]"

func cmdReplay(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("replay", replaySynopsis, stderr)
	set := setFlag{}
	fs.Var(set, "set", "override a scenario var: name=value (repeatable)")
	topo := fs.String("topology", "", "predict on this topology `FILE` (a calibrated one) instead of the scenario's")
	asJSON := fs.Bool("json", false, "print one JSON document: every op's predicted and measured times")
	plotTo := fs.String("plot", "", "write timelines.png (predicted above measured), scatter.png and replay.json (what --json prints) into `DIR`")
	top := fs.Int("top", 5, "list the `N` ops with the largest error")
	repeat := fs.Int("repeat", 1, "run on the GPUs `N` times and compare with the run of median makespan")
	maxOps := fs.Int64("max-ops", scenarios.DefaultMaxOps, "refuse scenarios that expand to more than `N` ops")
	probe := fs.Bool("host-probe", false, "before each run, time 400 empty kernels as calibrate does and predict that run with their host time per op (for a host whose speed drifts)")
	if helpRequested(fs, replaySynopsis, args, stdout) {
		return nil
	}
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := oneArg("replay", replaySynopsis, "SCENARIO", "a scenario file, or a shipped name such as hw-copies", pos, set); err != nil {
		return err
	}
	if err := checkMaxOps("replay", *maxOps); err != nil {
		return err
	}
	if *repeat < 1 || *repeat > 1000 {
		return &usageError{fmt.Sprintf("gpusim replay: --repeat %d: want 1 to 1000", *repeat)}
	}
	if *top < 0 {
		return &usageError{fmt.Sprintf("gpusim replay: --top %d: want 0 or more ops to list", *top)}
	}
	if err := plotDirUsable("replay", *plotTo); err != nil {
		return err // before the GPUs run, not after
	}
	var t *topologies.Topology
	if *topo != "" {
		if t, err = loadTopology(*topo); err != nil {
			return err
		}
	}
	// It runs on the simulator and on the GPUs: refused, as run's, where
	// memory is short.
	sc, err := loadScenarioWith(pos[0], scenarios.Options{Set: set, MaxOps: *maxOps, Topology: t, MemoryOps: memoryOps()})
	if err == nil {
		printWarnings(stderr, sc.Warnings)
	}
	if err != nil {
		return asMemoryFailure(err, "")
	}
	if err := checkMemory(sc); err != nil {
		return err
	}
	pred, err := sim.Run(replayMachine(sc, 0), sc.Program)
	if over := (*sim.OverflowError)(nil); errors.As(err, &over) && over.Where != "" {
		return err // it names its op's file, line and column
	}
	if err != nil {
		return fmt.Errorf("%s: %v", sc.File, err)
	}
	var ready func() error
	if *plotTo != "" {
		// Before the GPU run, not after it; and only where there is a GPU.
		ready = func() error { return plotDir(*plotTo) }
	}
	var before func(context.Context, hw.Driver, int) error
	var beforeGPUs []int
	var probes []sim.Time
	if *probe {
		beforeGPUs = []int{calibrate.HostOpDevice}
		before = func(ctx context.Context, drv hw.Driver, i int) error {
			x, err := calibrate.HostOpTime(ctx, drv, hw.Options{}) // seconds
			probes = append(probes, sim.Time(math.Round(x*1e12)))
			return err
		}
	}
	runs, info, err := runOnGPUTimes(sc, *repeat, ready, before, beforeGPUs, stderr)
	if err != nil {
		return err
	}
	order := make([]int, len(runs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return runs[order[i]].Makespan < runs[order[j]].Makespan })
	mid := order[len(order)/2]
	meas := runs[mid]
	if len(runs) > 1 {
		fmt.Fprintf(stderr, "hw: %d runs, makespans %s to %s; comparing with the median, %s\n", len(runs), runs[order[0]].Makespan, runs[order[len(order)-1]].Makespan, meas.Makespan)
	}
	if *probe {
		// The compared run is predicted with the host time per op taken
		// just before it.
		was := replayMachine(sc, 0).Hosts[0]
		fmt.Fprintf(stderr, "hw: host time per kernel op before each run %s to %s; the compared run is predicted with the %s before it, where the topology has %s\n",
			slices.Min(probes), slices.Max(probes), probes[mid], was.APIOverhead+was.TimingOverhead)
		if pred, err = sim.Run(replayMachine(sc, probes[mid]), sc.Program); err != nil {
			return fmt.Errorf("%s: %v", sc.File, err)
		}
	}
	c, err := hw.Compare(pred, meas)
	if err != nil {
		return fmt.Errorf("%s: %v", sc.File, err)
	}
	printWarnings(stderr, meas.Warnings)
	makespans := make([]sim.Time, len(runs))
	for i, r := range runs {
		makespans[i] = r.Makespan
	}
	asJSONTo := func(w io.Writer) error {
		return writeReplayJSON(w, sc, c, pred.Machine.Hosts[0], replayRuns{makespans, mid, probes}, info.HostNodes)
	}
	if *plotTo != "" {
		if err := plotReplay(*plotTo, sc, pred, meas, c); err != nil {
			return err
		}
		// Beside the plots, what --json prints: the numbers they show, of
		// the same runs as the table.
		if err := writeFileAtomic(filepath.Join(*plotTo, "replay.json"), asJSONTo); err != nil {
			return err
		}
	}
	if *asJSON {
		return asJSONTo(stdout)
	}
	writeReplay(stdout, sc, c, *top)
	return nil
}

// replayMachine is the machine replay predicts on: the scenario's, with
// each host's timing_overhead charged to the ops the hw backend times, or,
// given a probe of the host time of a kernel op as the backend runs it
// (launch, timing event, bookkeeping), with the probe split between
// api_overhead and timing_overhead in the topology's proportion (a sync
// pays api_overhead alone; the backend times no sync). Without a timing
// overhead in the topology the whole probe is api_overhead.
func replayMachine(sc *scenarios.Scenario, probe sim.Time) *sim.Machine {
	m := *sc.Topology.Machine
	m.Hosts = slices.Clone(m.Hosts)
	for i := range m.Hosts {
		h := &m.Hosts[i]
		if i < len(sc.Topology.TimingOverhead) {
			h.TimingOverhead = sc.Topology.TimingOverhead[i]
		}
		if probe > 0 {
			api := probe
			if sum := h.APIOverhead + h.TimingOverhead; h.TimingOverhead > 0 && sum > 0 {
				api = sim.Time(math.Round(float64(probe) * float64(h.APIOverhead) / float64(sum)))
			}
			h.APIOverhead, h.TimingOverhead = api, probe-api
		}
	}
	return &m
}

func relPct(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", 100*x)
}

func writeReplay(w io.Writer, sc *scenarios.Scenario, c *hw.Comparison, top int) {
	fmt.Fprintf(w, "%s on %s: predicted %s, measured %s (makespan error %s)\n", sc.Name, sc.Topology.Machine.Name, c.PredMakespan, c.MeasMakespan, relPct(c.MakespanRel))
	fmt.Fprintf(w, "median |error| over %d kernels, copies and host ops: %.1f%%\n", c.Timed, 100*c.MedianAbsRel)
	// Spin kernels and host work run for the time the prediction gives
	// them: only copies and memory kernels test the model.
	switch given := c.Timed - c.Modelled; {
	case c.Modelled == 0:
		fmt.Fprintf(w, "none of them tests the model: spin kernels and host work run for the durations the prediction gives them\n\n")
	case given == 0:
		fmt.Fprintf(w, "each of them tests the model (copies and memory kernels)\n\n")
	default:
		fmt.Fprintf(w, "over the %d copies and memory kernels, whose durations the model predicts: %.1f%% (the other %d run for the durations the prediction gives them)\n\n",
			c.Modelled, 100*c.MedianModelled, given)
	}
	fmt.Fprintf(w, "%-28s %-7s %14s %14s %14s %8s\n", "op", "kind", "measured start", "predicted", "measured", "error")
	for _, e := range c.Ops {
		if e.Kind == sim.OpEventRecord || e.Kind == sim.OpEventWait {
			continue
		}
		fmt.Fprintf(w, "%-28s %-7s %14s %14s %14s %8s\n", e.ID, e.Kind, e.MeasStart, e.PredDur, e.MeasDur, relPct(e.Rel))
	}
	if ws := c.Worst(top); len(ws) > 0 {
		fmt.Fprintf(w, "\nlargest errors:\n")
		for _, e := range ws {
			fmt.Fprintf(w, "  %-28s %-7s predicted %s, measured %s (%s)\n", e.ID, e.Kind, e.PredDur, e.MeasDur, relPct(e.Rel))
		}
	}
}

// replayRuns is what replay --json says of the runs on the GPUs: each
// one's makespan (in the order they ran), which was compared, and the
// host time per kernel op taken before each (--host-probe; nil without).
type replayRuns struct {
	makespans []sim.Time
	compared  int
	probes    []sim.Time
}

func writeReplayJSON(w io.Writer, sc *scenarios.Scenario, c *hw.Comparison, host sim.Host, runs replayRuns, hostNodes []int) error {
	probed := runs.probes != nil
	var b strings.Builder
	num := func(x float64) string {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "null"
		}
		return fmt.Sprintf("%.6g", x)
	}
	modelled := c.MedianModelled // null over no op
	if c.Modelled == 0 {
		modelled = math.NaN()
	}
	// The host costs the prediction used: the topology's, or the probe's
	// before the compared run (--host-probe).
	fmt.Fprintf(&b, "{\"scenario\":%q,\"topology\":%q,\"host_probe\":%t,\"predicted_api_overhead_ns\":%s,\"predicted_timing_overhead_ns\":%s,\"predicted_makespan_ns\":%s,\"measured_makespan_ns\":%s,\"makespan_error\":%s,\"median_abs_error\":%s,\"timed_ops\":%d,\"median_abs_error_modelled\":%s,\"modelled_ops\":%d,\"ops\":[",
		sc.Name, sc.Topology.Machine.Name, probed, host.APIOverhead.NS(), host.TimingOverhead.NS(), c.PredMakespan.NS(), c.MeasMakespan.NS(), num(c.MakespanRel), num(c.MedianAbsRel), c.Timed, num(modelled), c.Modelled)
	for i, e := range c.Ops {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n  {\"id\":%q,\"kind\":%q,\"predicted_start_ns\":%s,\"predicted_ns\":%s,\"measured_start_ns\":%s,\"measured_ns\":%s,\"error\":%s,\"timed\":%t,\"modelled\":%t,\"predicted_host_ns\":%s,\"measured_host_ns\":%s}",
			e.ID, e.Kind.String(), e.PredStart.NS(), e.PredDur.NS(), e.MeasStart.NS(), e.MeasDur.NS(), num(e.Rel), e.Timed, e.Modelled, e.PredHost.NS(), e.MeasHost.NS())
	}
	// Every run's makespan, for the spread the hardware gave.
	nsList := func(key string, ts []sim.Time) {
		fmt.Fprintf(&b, ",%q:[", key)
		for i, t := range ts {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(t.NS())
		}
		b.WriteString("]")
	}
	b.WriteString("]")
	nsList("runs_makespan_ns", runs.makespans)
	fmt.Fprintf(&b, ",\"compared_run\":%d", runs.compared)
	if probed {
		nsList("probed_host_ns", runs.probes)
	}
	// Where the topology's hosts ran on this machine (NUMA nodes; only
	// those placed: none on a machine of one node).
	b.WriteString(",\"host_numa_nodes\":{")
	sep := ""
	for h, node := range hostNodes {
		if node >= 0 {
			fmt.Fprintf(&b, "%s%q:%d", sep, sc.Topology.Machine.Hosts[h].Name, node)
			sep = ","
		}
	}
	b.WriteString("}}\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return &failError{err}
	}
	return nil
}

func plotReplay(dir string, sc *scenarios.Scenario, pred, meas *sim.Result, c *hw.Comparison) error {
	if err := plotDir(dir); err != nil {
		return err
	}
	// One time axis for both, so the eye compares lengths.
	end := max(pred.Makespan, meas.Makespan)
	pp, pi, err := plots.Timeline(pred, plots.TimelineOptions{Title: "predicted: " + sc.Name + " on " + sc.Topology.Machine.Name, To: end})
	if err != nil {
		return fmt.Errorf("gpusim replay: %v", err)
	}
	mp, mi, err := plots.Timeline(meas, plots.TimelineOptions{Title: "measured on the GPU", To: end})
	if err != nil {
		return fmt.Errorf("gpusim replay: %v", err)
	}
	if err := writePicture(filepath.Join(dir, "timelines.png"), func(out io.Writer, format string) error {
		return plots.WriteSheet(out, []*plot.Plot{pp, mp}, 1, plots.TimelineWidth, []vg.Length{pi.Height, mi.Height}, format)
	}); err != nil {
		return err
	}
	var pts []plots.ScatterPoint
	for _, e := range c.Ops {
		if e.Timed {
			kind := e.Kind.String()
			if e.Kind == sim.OpKernel && e.Modelled {
				kind = "memory kernel"
			} else if e.Kind == sim.OpKernel {
				kind = "spin kernel" // runs the predicted time
			}
			pts = append(pts, plots.ScatterPoint{Predicted: e.PredDur.Seconds(), Measured: e.MeasDur.Seconds(), Kind: kind})
		}
	}
	if len(pts) == 0 {
		return nil
	}
	title := fmt.Sprintf("%s: op durations, median |error| %.1f%%", sc.Name, 100*c.MedianAbsRel)
	if c.Modelled > 0 && c.Modelled < c.Timed {
		title += fmt.Sprintf(" (copies and memory kernels: %.1f%%)", 100*c.MedianModelled)
	}
	sp, err := plots.Scatter(title, pts)
	if err != nil {
		return fmt.Errorf("gpusim replay: %v", err)
	}
	return writePlot(filepath.Join(dir, "scatter.png"), sp, plots.Pixels(900), plots.Pixels(800))
}

const calibrateSynopsis = "gpusim calibrate [--topology FILE] [-o FILE] [--quick] [--budget DURATION]"

func cmdCalibrate(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("calibrate", calibrateSynopsis, stderr)
	topo := fs.String("topology", "", "the machine's topology `FILE` to calibrate (default: discovered)")
	out := fs.String("o", "", "write the calibrated topology to `FILE` (default: standard output)")
	quick := fs.Bool("quick", false, "fewer sizes and repeats (well under a minute per GPU)")
	budgetF := &budgetFlag{10 * time.Minute}
	fs.Var(budgetF, "budget", "stop starting measurements after this `DURATION`, such as 2m, 90s or 1.5 min")
	budget := &budgetF.d
	if helpRequested(fs, calibrateSynopsis, args, stdout) {
		return nil
	}
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return &usageError{fmt.Sprintf("gpusim calibrate: unexpected argument %q: it takes only flags (usage: %s)", pos[0], calibrateSynopsis)}
	}
	if *budget <= 0 {
		return &usageError{"gpusim calibrate: --budget must be positive, such as 2m"}
	}
	if *out != "" {
		// Say so before minutes of measuring, not after.
		if st, err := os.Stat(filepath.Dir(*out)); err != nil || !st.IsDir() {
			return &failError{fmt.Errorf("cannot write %s: %s is not a folder", *out, filepath.Dir(*out))}
		}
		if err := notADirectory(*out); err != nil {
			return err
		}
	}
	var base []byte
	baseName := *topo
	if *topo != "" {
		if base, err = readTopologySource(*topo); err != nil {
			return err
		}
		// A file that is not a topology is bad input (exit 2), whether
		// or not this machine has a GPU.
		if _, err := topologies.Load(baseName, base); err != nil {
			return err
		}
	}
	drv, err := openDriver()
	if err != nil {
		return err
	}
	defer drv.Close()
	n, err := drv.DeviceCount()
	if err != nil {
		return &failError{fmt.Errorf("calibrate: %w", err)}
	}
	if base == nil {
		baseName = "discovered"
		// The GPUs CUDA is shown (CUDA_VISIBLE_DEVICES, a scheduler's
		// share), in its order: machine GPU i is CUDA device i.
		y, err := discoverGPUs("discovered", cudaBusIDs(drv, n))
		if err != nil {
			// Without NVML, a topology of the devices the driver sees.
			fmt.Fprintf(stderr, "calibrate: NVML cannot describe the GPUs CUDA shows (%v); describing them from the CUDA driver alone\n", err)
		} else if t, lerr := topologies.Load(baseName, []byte(y)); lerr != nil {
			err = lerr
			fmt.Fprintf(stderr, "calibrate: the topology NVML gave does not load (%v); describing the machine from the CUDA driver alone\n", lerr)
		} else if len(t.Machine.GPUs) != n {
			// Where the driver gave no PCI addresses, NVML's every GPU:
			// CUDA may be shown fewer.
			err = errors.New("count")
			fmt.Fprintf(stderr, "calibrate: NVML sees %d GPUs, the CUDA driver %d (is CUDA_VISIBLE_DEVICES set?); describing the machine from the CUDA driver alone\n", len(t.Machine.GPUs), n)
		}
		if err != nil {
			var warning string
			if y, warning, err = driverTopology(drv); err != nil {
				return &failError{fmt.Errorf("calibrate: %w", err)}
			}
			fmt.Fprintln(stderr, "calibrate: warning: "+warning)
		}
		base = []byte(y)
	}
	// A topology given is checked against the machine before minutes of
	// measuring, not after.
	if err := calibrate.CheckBase(baseName, base, n); err != nil {
		return err
	}
	ctx, stop := interruptible()
	defer stop()
	bar := newProgress(stderr, 0)
	res, err := calibrate.Run(ctx, drv, calibrate.Options{Quick: *quick, Budget: *budget, Progress: bar.at})
	bar.finish()
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return &failError{errors.New("calibrate: interrupted; everything allocated on the GPUs was freed")}
		}
		// Everything calibration can fail on is the machine's.
		return &failError{fmt.Errorf("calibrate: %w", err)}
	}
	y, err := res.Apply(baseName, base)
	if err != nil {
		return err
	}
	for _, w := range res.Warnings() {
		fmt.Fprintln(stderr, "calibrate: warning: "+w)
	}
	if *out == "" {
		if _, err := stdout.Write(y); err != nil {
			return &failError{err}
		}
		return nil
	}
	return writeFileAtomic(*out, func(w io.Writer) error { _, err := w.Write(y); return err })
}

// readTopologySource returns a topology's YAML: a file, or a shipped one.
func readTopologySource(name string) ([]byte, error) {
	if b, err := readInput(name); err == nil {
		return b, nil
	} else if !notThere(err, name) {
		return nil, err
	}
	if b, ok := topologies.ShippedSource(strings.TrimSuffix(name, ".yaml")); ok {
		return b, nil
	}
	return nil, fmt.Errorf("%s: no such file (shipped topologies: %s)", name, strings.Join(topologies.Shipped(), ", "))
}

// fallbackModel is the GPU preset of a device whose model is not known.
const fallbackModel = "H100-SXM"

// driverTopology describes the machine from what the CUDA driver says: one
// host, each GPU on its own PCIe link. What the driver does not say is
// assumed, with a comment beside each assumed value, and summed up in
// warning, one line: a GPU of no known model is an H100-SXM (the peaks
// memory_efficiency and the roofline are relative to), and every link PCIe
// Gen5 x16 (the driver has no attribute for the PCIe generation or width;
// calibration sets the link's bandwidth and latency anyway).
func driverTopology(drv hw.Driver) (y, warning string, err error) {
	n, err := drv.DeviceCount()
	if err != nil {
		return "", "", err
	}
	var b strings.Builder
	b.WriteString("name: driver\ndescription: the GPUs the CUDA driver reports, each on a PCIe link to one host\nhosts:\n  - {name: cpu0}\ngpus:\n")
	var unknown []string
	for i := 0; i < n; i++ {
		name, err := drv.DeviceName(i)
		if err != nil {
			return "", "", err
		}
		model, note := presetFor(name)
		comment := name
		switch {
		case model == "":
			model = fallbackModel
			comment += "; assumed: " + note + "; memory_efficiency and roofline peaks are relative to " + fallbackModel
			unknown = append(unknown, fmt.Sprintf("gpu%d (%s)", i, name))
		case note != "":
			comment += "; " + note
		}
		fmt.Fprintf(&b, "  - {name: gpu%d, model: %s, host: cpu0} # %s\n", i, model, strings.Join(strings.Fields(comment), " ")) // one line, whatever the name
	}
	b.WriteString("links:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  - {ends: [gpu%d, cpu0], type: pcie5x16} # assumed: PCIe Gen5 x16 (the CUDA driver does not report the PCIe generation or width); calibration measures its bandwidth and latency\n", i)
	}
	warning = "the CUDA driver does not report the PCIe generation or width: each GPU's link to the host is assumed PCIe Gen5 x16 (calibration measures its bandwidth and latency)"
	if len(unknown) > 0 {
		warning = fmt.Sprintf("%s of no known model, assumed %s (memory_efficiency and roofline peaks are relative to it); %s", strings.Join(unknown, ", "), fallbackModel, warning)
	}
	return b.String(), warning, nil
}

const discoverSynopsis = "gpusim topo discover [-o FILE] [--name NAME] [--all]"

func cmdTopoDiscover(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("topo discover", discoverSynopsis, stderr)
	out := fs.String("o", "", "write the topology to `FILE` (default: standard output)")
	name := fs.String("name", "discovered", "the topology's `NAME`")
	all := fs.Bool("all", false, "every GPU NVML sees, in its order, even where CUDA is shown fewer or another order")
	if helpRequested(fs, discoverSynopsis, args, stdout) {
		return nil
	}
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return &usageError{fmt.Sprintf("gpusim topo discover: unexpected argument %q: it takes only flags (usage: %s)", pos[0], discoverSynopsis)}
	}
	if err := checkNameFlag("topo discover", *name); err != nil {
		return err
	}
	// The GPUs as CUDA numbers them, where the CUDA driver is there: machine
	// GPU i is CUDA device i when the topology is replayed or calibrated.
	var busIDs []string
	cuda := false // the CUDA driver opened
	if !*all {
		if drv, err := openDriver(); err == nil {
			cuda = true
			if n, err := drv.DeviceCount(); err == nil {
				busIDs = cudaBusIDs(drv, n)
			}
			drv.Close()
		}
	}
	y, err := discoverGPUs(*name, busIDs)
	if err != nil && busIDs != nil && notShown(err) {
		// NVML and CUDA disagree on the GPUs' addresses: NVML's view.
		var y2 string
		if y2, err = discoverGPUs(*name, nil); err == nil {
			fmt.Fprintf(stderr, "topo discover: NVML does not know every GPU CUDA shows; writing NVML's GPUs in its order\n")
			y = y2
		}
	}
	if err != nil {
		if *all && !cuda {
			// Only to say whether NVML alone is missing.
			if drv, oerr := openDriver(); oerr == nil {
				cuda = true
				drv.Close()
			}
		}
		return nvmlUnavailable(err, cuda)
	}
	if *out == "" {
		if _, err := io.WriteString(stdout, y); err != nil {
			return &failError{err}
		}
		return nil
	}
	return writeFileAtomic(*out, func(w io.Writer) error { _, err := io.WriteString(w, y); return err })
}

// presetFor is the GPU preset for a device name the driver reports, with a
// note where the preset is an approximation (H100 NVL as H100-SXM); where
// none fits, no preset and why.
func presetFor(device string) (preset, note string) {
	p, note := models.GPUPresetFor(device)
	if p == "" {
		return "", device + " is not a known model"
	}
	return p, note
}

// budgetFlag is calibrate's --budget: a Go duration (2m, 1m30s) or a time
// as --from reads one (90 s, 1.5 min; a number needs its unit), so that
// the commands read times alike.
type budgetFlag struct{ d time.Duration }

func (b *budgetFlag) String() string { return b.d.String() }

func (b *budgetFlag) Set(s string) error {
	if d, err := time.ParseDuration(s); err == nil {
		b.d = d
		return nil
	}
	v, err := units.Parse(s, units.Duration)
	if err != nil || math.IsNaN(v) {
		return fmt.Errorf("%q is not a duration: use a number and a unit, such as 2m, 90s or 1.5 min", s)
	}
	if err := noUnit(s); err != nil {
		return err
	}
	if v > 1e6 {
		return fmt.Errorf("%q is more than a calibration needs: give at most 1000000 s (11.6 days), such as 2m, 90s or 1.5 min", s)
	}
	b.d = time.Duration(v * 1e9)
	return nil
}

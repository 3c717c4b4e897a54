package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"math"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"gpusim/internal/units"
	"gpusim/mirror"
	"gpusim/models"
	"gpusim/plots"
	"gpusim/topologies"
)

const ncclSynopsis = "gpusim nccl-tests --topology T --op all_reduce [--gpus N | -g N] [--procs P] [-b 8] [-e 8G] [-f 2] [-i BYTES] [-d float] [--algo A] [--proto P] [--json] [--plot FILE]"

// sizeRe is a size as nccl-tests reads it (parsesize: a number, then one
// of k, m, g in either case, powers of 1024; gpusim also takes what
// follows them, B or iB, and a whole number of bytes written with a
// fraction or an exponent).
var sizeRe = regexp.MustCompile(`^([0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?) *([kKmMgG]?)(i?[bB])?$`)

// parseSize reads nccl-tests sizes: 8, 8K, 8M, 8G (also 8m, 8MB, 8MiB:
// 8 x 1024^2 bytes, as nccl-tests reads 8MB).
func parseSize(s string) (int64, error) {
	m := sizeRe.FindStringSubmatch(strings.TrimSpace(s))
	bad := fmt.Errorf("%q is not a size: use bytes with an optional K, M or G (powers of 1024, as nccl-tests reads them), such as 8, 8K or 8G", s)
	if m == nil {
		return 0, bad
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, bad
	}
	v *= map[string]float64{"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[strings.ToLower(m[2])]
	if v >= 1<<62 || v != math.Trunc(v) {
		return 0, bad
	}
	return int64(v), nil
}

type sizeFlag struct {
	v   *int64
	set bool
}

func (s *sizeFlag) String() string {
	if s.v == nil {
		return ""
	}
	return fmt.Sprint(*s.v)
}

func (s *sizeFlag) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*s.v, s.set = n, true
	return nil
}

func cmdNCCLTests(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("nccl-tests", ncclSynopsis, stderr)
	topo := fs.String("topology", "", "the machine: a topology file or a shipped name (required)")
	op := fs.String("op", "all_reduce", "the operation: "+strings.Join(mirror.NCCLTestOpNames, ", "))
	gpus := fs.Int("gpus", 0, "the GPUs of each process, as nccl-tests' -g: the first `N` x --procs GPUs (default: all, shared among the processes)")
	fs.IntVar(gpus, "g", 0, "same as --gpus")
	procs := fs.Int("procs", 1, "split the GPUs among `P` processes in order, as mpirun -np P: each drives its share from one thread on its first GPU's host")
	cfg := mirror.NCCLTestsConfig{MinBytes: 32 << 20, MaxBytes: 32 << 20, Factor: 1, StepBytes: 1 << 20}
	fs.Var(&sizeFlag{v: &cfg.MinBytes}, "b", "minimum size in bytes (K, M, G: powers of 1024)")
	fs.Var(&sizeFlag{v: &cfg.MaxBytes}, "e", "maximum size in bytes")
	fs.Int64Var(&cfg.Factor, "f", 1, "multiply the size by this factor each step")
	fs.Var(&sizeFlag{v: &cfg.StepBytes}, "i", "add this many bytes each step when -f is 1")
	dtype := fs.String("d", "float", "data type: float, half, bfloat16, double, int8")
	algo := fs.String("algo", "", "force an algorithm, as NCCL_ALGO: ring, tree, nvls, direct (all-to-all's), or auto (NCCL's choice, the default)")
	proto := fs.String("proto", "", "force a protocol, as NCCL_PROTO: simple, ll, ll128")
	asJSON := fs.Bool("json", false, `print {"op", "gpus", "procs", "avg_busbw_gbps", "rows": [...]} instead of the table`)
	plotTo := fs.String("plot", "", "also draw busbw and algbw against size into `FILE` (.png, .svg or .pdf)")
	if helpRequested(fs, ncclSynopsis, args, stdout) {
		return nil
	}
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := needTopology("nccl-tests", ncclSynopsis, pos, *topo); err != nil {
		return err
	}
	if _, ok := mirror.NCCLTestOps[*op]; !ok {
		return &usageError{fmt.Sprintf("gpusim nccl-tests: unknown --op %q; operations: %s", *op, strings.Join(mirror.NCCLTestOpNames, ", "))}
	}
	gpusSet := false
	fs.Visit(func(f *flag.Flag) { gpusSet = gpusSet || f.Name == "gpus" || f.Name == "g" })
	if *gpus < 0 || gpusSet && *gpus == 0 {
		return &usageError{fmt.Sprintf("gpusim nccl-tests: --gpus (-g) %d: give at least 1 GPU (leave the flag out for all of them)", *gpus)}
	}
	if *procs < 1 {
		return &usageError{fmt.Sprintf("gpusim nccl-tests: --procs %d: give at least 1 process", *procs)}
	}
	// -g counts each process's GPUs, as nccl-tests' does (mpirun -np 8
	// all_reduce_perf -g 1 runs 8 ranks).
	if *gpus > 1<<20 {
		return &usageError{fmt.Sprintf("gpusim nccl-tests: -g %d: more GPUs than any machine has", *gpus)}
	}
	if *procs > 1<<20 {
		return &usageError{fmt.Sprintf("gpusim nccl-tests: --procs %d: more processes than any machine's GPUs", *procs)}
	}
	*gpus *= *procs
	cfg.GPUs, cfg.Procs = *gpus, *procs
	if err := cfg.Check(); err != nil {
		return &usageError{"gpusim nccl-tests: " + err.Error()}
	}
	dt, ok := map[string]models.DType{"float": models.FP32, "half": models.FP16, "bfloat16": models.BF16, "double": models.FP64, "int8": models.INT8}[*dtype]
	if !ok {
		return &usageError{fmt.Sprintf("gpusim nccl-tests: unknown -d %q; types: float, half, bfloat16, double, int8", *dtype)}
	}
	cfg.DType, cfg.Op, cfg.GPUs = dt, *op, *gpus
	cfg.Algorithm, cfg.Protocol = strings.ToLower(*algo), strings.ToLower(*proto)
	t, err := loadTopology(*topo)
	if err != nil {
		return err
	}
	if have := len(t.Machine.GPUs); gpusSet && *procs > 1 && *gpus > have {
		return &usageError{fmt.Sprintf("gpusim nccl-tests: -g %d x --procs %d: %d GPUs; topology %s has %d", *gpus / *procs, *procs, *gpus, t.Name, have)}
	}
	if err := plotFileUsable("nccl-tests", *plotTo, *topo); err != nil {
		return err
	}
	n := cfg.GPUs
	if n <= 0 || n > len(t.Machine.GPUs) {
		n = len(t.Machine.GPUs)
	}
	if n > maxNCCLRanks {
		return &usageError{fmt.Sprintf("gpusim nccl-tests: %d ranks: predicted for up to %d (a ring over n ranks is 2n(n-1) transfers at each size: %d here); give fewer with -g, or a topology of fewer GPUs", n, maxNCCLRanks, 2*n*(n-1))}
	}
	if mem, model := leastMemory(t, n); mem > 0 {
		if need := mirror.BufferBytes(cfg.Op, n, cfg.MaxBytes); need > mem {
			return &usageError{fmt.Sprintf("gpusim nccl-tests: -e %s: each GPU would hold %s of send and receive buffers, which nccl-tests allocates before it runs, but %s has %s: give -e of at most %s", units.Format(float64(cfg.MaxBytes), units.Bytes), units.Format(float64(need), units.Bytes), model, units.Format(float64(mem), units.Bytes), sizeArg(mirror.MaxBufferSize(cfg.Op, n, mem)))}
		}
	}
	rows, err := mirror.NCCLTests(t, cfg)
	if err != nil {
		return fmt.Errorf("gpusim nccl-tests: %v", err)
	}
	ranks := make([]int, n) // the first n GPUs, as the mirror runs them
	for i := range ranks {
		ranks[i] = i
	}
	if w := models.MultiNodeWarning(t.Machine, ranks); w != "" {
		fmt.Fprintln(stderr, "warning: "+w)
	}
	if *plotTo != "" {
		if err := plotNCCLTests(*plotTo, t, cfg, n, rows); err != nil {
			return err
		}
	}
	if *asJSON {
		return mirror.WriteNCCLTestsJSON(stdout, cfg, n, rows)
	}
	mirror.WriteNCCLTests(stdout, t, cfg, rows)
	return nil
}

const nvbSynopsis = "gpusim nvbandwidth --topology T [-t TEST... | --testcase TEST...]... [--buffer-size MiB | -b MiB | --bufferSize MiB] [--json] [--plot FILE]"

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func cmdNVBandwidth(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("nvbandwidth", nvbSynopsis, stderr)
	topo := fs.String("topology", "", "the machine: a topology file or a shipped name (required)")
	var tests listFlag
	fs.Var(&tests, "t", "run this test, by name or by its index in nvbandwidth's list (repeatable; default: all of "+strings.Join(mirror.NVBandwidthTests, ", ")+")")
	fs.Var(&tests, "testcase", "same as -t")
	buf := fs.Int64("buffer-size", mirror.NVBandwidthDefaultBuffer>>20, "copy size in MiB, as nvbandwidth's -b")
	fs.Int64Var(buf, "b", mirror.NVBandwidthDefaultBuffer>>20, "same as --buffer-size")
	fs.Int64Var(buf, "bufferSize", mirror.NVBandwidthDefaultBuffer>>20, "same as --buffer-size (nvbandwidth's spelling)")
	asJSON := fs.Bool("json", false, `print {"tests": {NAME: {"title", "unit", "rows", "cols", "matrix", "sum"}}} instead`)
	plotTo := fs.String("plot", "", "also draw each matrix as a heatmap into `FILE` (.png, .svg or .pdf)")
	if helpRequested(fs, nvbSynopsis, args, stdout) {
		return nil
	}
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	// nvbandwidth's -t takes several tests (-t 0 1 4): after a -t, the
	// arguments that read as tests (an index, or a name with its
	// underscores) are more of them, checked with the others below.
	for len(tests) > 0 && len(pos) > 0 {
		if _, err := strconv.Atoi(pos[0]); err != nil && !strings.Contains(pos[0], "_") {
			break
		}
		tests, pos = append(tests, pos[0]), pos[1:]
	}
	if err := needTopology("nvbandwidth", nvbSynopsis, pos, *topo); err != nil {
		return err
	}
	if *buf <= 0 || *buf > 1<<20 {
		return &usageError{"gpusim nvbandwidth: --buffer-size is a number of MiB from 1 to 1048576"}
	}
	if len(tests) == 0 {
		tests = append(listFlag(nil), mirror.NVBandwidthTests...)
	}
	for i, tc := range tests {
		// A name, or an index in nvbandwidth's own list, as its -t takes.
		name, err := mirror.NVBandwidthTestName(tc)
		if err != nil {
			return &usageError{"gpusim nvbandwidth: " + err.Error()}
		}
		tests[i] = name
	}
	if err := plotFileUsable("nvbandwidth", *plotTo, *topo); err != nil {
		return err
	}
	// A test named twice (-t 0 -t host_to_device_memcpy_ce) runs once, as
	// nvbandwidth runs each test once: its JSON has a key per test.
	seen := map[string]bool{}
	tests = slices.DeleteFunc(tests, func(tc string) bool {
		dup := seen[tc]
		seen[tc] = true
		return dup
	})
	t, err := loadTopology(*topo)
	if err != nil {
		return err
	}
	if err := heatmapsFit(t, *plotTo); err != nil {
		return err // before the tests run, not after (gb200-nvl72 takes seconds)
	}
	if i := slices.IndexFunc(tests, func(tc string) bool { return strings.HasPrefix(tc, "device_to_device") }); i >= 0 {
		if err := pairsFit("nvbandwidth", tests[i]+"'s matrix is", t); err != nil {
			return err
		}
	}
	// Each test holds at least one buffer of the size on a GPU; the
	// device-to-device bidirectional ones two on each of the pair (a
	// source and a destination, a copy each way: methods.md, nvbandwidth).
	if mem, model := leastMemory(t, len(t.Machine.GPUs)); mem > 0 && *buf<<20 > mem {
		return &usageError{fmt.Sprintf("gpusim nvbandwidth: --buffer-size %d: more MiB than the %d (%s) of %s; give at most %d", *buf, mem>>20, units.Format(float64(mem), units.Bytes), model, mem>>20)}
	} else if i := slices.IndexFunc(tests, func(tc string) bool { return strings.HasPrefix(tc, "device_to_device_bidirectional") }); mem > 0 && i >= 0 && len(t.Machine.GPUs) > 1 && 2*(*buf<<20) > mem {
		return &usageError{fmt.Sprintf("gpusim nvbandwidth: --buffer-size %d: %s holds two buffers of it on each GPU of a pair, more than the %d MiB (%s) of %s; give at most %d, or other tests", *buf, tests[i], mem>>20, units.Format(float64(mem), units.Bytes), model, mem>>21)}
	}
	var all []*mirror.Matrix
	if !*asJSON {
		fmt.Fprintf(stdout, "gpusim nvbandwidth: predicted for %s, buffer size %d MiB\n\n", t.Name, *buf)
	}
	for _, tc := range tests {
		ms, err := mirror.NVBandwidth(t.Machine, tc, *buf<<20, onEveryCPU)
		if err != nil {
			return fmt.Errorf("gpusim nvbandwidth: %v", err)
		}
		all = append(all, ms...)
		if !*asJSON {
			out := bufio.NewWriter(stdout) // a write per cell otherwise
			fmt.Fprintf(out, "Running %s.\n", tc)
			for _, m := range ms {
				mirror.WriteMatrix(out, m)
				fmt.Fprintf(out, "SUM %s %.2f\n", m.Name, m.Sum())
			}
			fmt.Fprintln(out)
			_ = out.Flush() // runChecked's writer catches a write that failed
		}
	}
	if *plotTo != "" {
		if err := plotMatrices(*plotTo, t.Name, all); err != nil {
			return err
		}
	}
	if *asJSON {
		return mirror.WriteMatricesJSON(stdout, all)
	}
	return nil
}

const p2pSynopsis = "gpusim p2p-test --topology T [--json] [--plot FILE]"

func cmdP2PTest(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("p2p-test", p2pSynopsis, stderr)
	topo := fs.String("topology", "", "the machine: a topology file or a shipped name (required)")
	asJSON := fs.Bool("json", false, `print {"tests": {NAME: {"title", "unit", "rows", "cols", "matrix", "sum"}}} instead`)
	plotTo := fs.String("plot", "", "also draw each matrix as a heatmap into `FILE` (.png, .svg or .pdf)")
	if helpRequested(fs, p2pSynopsis, args, stdout) {
		return nil
	}
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := needTopology("p2p-test", p2pSynopsis, pos, *topo); err != nil {
		return err
	}
	if err := plotFileUsable("p2p-test", *plotTo, *topo); err != nil {
		return err
	}
	t, err := loadTopology(*topo)
	if err != nil {
		return err
	}
	if err := heatmapsFit(t, *plotTo); err != nil {
		return err // before the tests run, not after (gb200-nvl72 takes seconds)
	}
	if err := pairsFit("p2p-test", "its matrices are", t); err != nil {
		return err
	}
	ms, err := mirror.P2PTest(t.Machine, onEveryCPU)
	if err != nil {
		return fmt.Errorf("gpusim p2p-test: %v", err)
	}
	if *plotTo != "" {
		if err := plotMatrices(*plotTo, t.Name, ms); err != nil {
			return err
		}
	}
	if *asJSON {
		return mirror.WriteMatricesJSON(stdout, ms)
	}
	out := bufio.NewWriter(stdout) // a write per cell: 2 M of them on 512 GPUs
	fmt.Fprintf(out, "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test] predicted by gpusim for %s\n", t.Name)
	for i, g := range t.Machine.GPUs {
		fmt.Fprintf(out, "Device: %d, %s\n", i, g.Model)
	}
	mirror.WriteP2P(out, ms)
	_ = out.Flush() // runChecked's writer catches a write that failed
	return nil
}

// needTopology refuses positional arguments and a missing --topology,
// saying which (the tools run on a machine the user names).
func needTopology(cmd, synopsis string, pos []string, topo string) error {
	if len(pos) != 0 {
		return &usageError{fmt.Sprintf("gpusim %s: unexpected argument %q (the machine is given with --topology); usage: %s", cmd, pos[0], synopsis)}
	}
	if topo == "" {
		return &usageError{fmt.Sprintf("gpusim %s: --topology is required: a topology file or a shipped name (gpusim topo list); usage: %s", cmd, synopsis)}
	}
	return nil
}

// onEveryCPU is a mirror.Each that spreads the calls over GOMAXPROCS
// goroutines, each taking the next i until none is left: the tools' cells
// are independent simulations, and each lands in its own place, so the
// output does not depend on how many ran at once.
func onEveryCPU(n int, f func(i int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				f(i)
			}
		})
	}
	wg.Wait()
}

// plotFileUsable is the usage error of a benchmark's --plot FILE (empty:
// none) that is not a picture's name or that is the topology file, or
// nil; checked before the benchmark runs.
func plotFileUsable(cmd, plotTo, topo string) error {
	if plotTo == "" {
		return nil
	}
	if _, err := plots.FormatOf(plotTo); err != nil {
		return &usageError{"gpusim " + cmd + ": --plot " + err.Error()}
	}
	return notAnInput(cmd, "plot", plotTo, topo)
}

// maxNCCLRanks is the most ranks nccl-tests predicts for: the largest
// NVLink domain built (NVL576). Each size runs the collective many times
// (warm-ups and iterations, as nccl-tests does), and a ring over n ranks
// is 2n(n-1) transfers: on a 2-core machine (2026-12-02) 256 ranks took 2 s
// a size, 1024 ranks 40 s, and -b 8 -e 8G is 31 sizes.
const maxNCCLRanks = 576

// maxMatrixGPUs is the most GPUs nvbandwidth and p2p-test predict
// matrices for: a run for each pair, n^2 of them, on a machine of n GPUs;
// at 128 GPUs p2p-test takes 25 s and nvbandwidth 14 s on a 2-core machine,
// at 300 p2p-test took 5 minutes (2026-12-02).
const maxMatrixGPUs = 128

// pairsFit is the error of cmd's matrices of GPU pairs (what) on more GPUs
// than they are predicted for, or nil.
func pairsFit(cmd, what string, t *topologies.Topology) error {
	if n := len(t.Machine.GPUs); n > maxMatrixGPUs {
		return &usageError{fmt.Sprintf("gpusim %s: %s has %d GPUs: %s predicted for up to %d GPUs (a run for each of its %d pairs would take minutes); use a topology of fewer GPUs", cmd, t.Name, n, what, maxMatrixGPUs, n*(n-1))}
	}
	return nil
}

// heatmapsFit is the error of a --plot of matrices (nvbandwidth, p2p-test)
// on more GPUs than a heatmap shows readably, or nil.
func heatmapsFit(t *topologies.Topology, plotTo string) error {
	if n := len(t.Machine.GPUs); plotTo != "" && n > maxHeatmapGPUs {
		return fmt.Errorf("%s: %d GPUs: --plot draws matrices of up to %d GPUs; drop --plot, or use --json", t.Name, n, maxHeatmapGPUs)
	}
	return nil
}

// leastMemory is the least device memory of the first n GPUs of t, and
// their model; 0 where none says.
func leastMemory(t *topologies.Topology, n int) (int64, string) {
	var mem int64
	model := ""
	for i := 0; i < n && i < len(t.GPUModels); i++ {
		if g := t.GPUModels[i]; g.MemoryBytes > 0 && (mem == 0 || g.MemoryBytes < mem) {
			mem, model = g.MemoryBytes, g.Name
		}
	}
	return mem, model
}

// sizeArg writes a size as nccl-tests' -b and -e read it, rounded down to
// whole GiB, MiB or KiB where it is that large.
func sizeArg(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%dG", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%dM", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%dK", n>>10)
	}
	return fmt.Sprint(n)
}

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"gpusim/hw"
	"gpusim/topologies"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"gpusim": func() { os.Exit(runChecked(os.Args[1:], os.Stdout, os.Stderr)) },
		// gpusim on a fake GPU (hw.NewFake with fakeGPU's numbers), for
		// the transcripts of run --backend hw, replay and calibrate.
		"gpusim-fakegpu": func() {
			openDriver = func() (hw.Driver, error) { return hw.NewFake(fakeGPU()), nil }
			os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
		},
	})
}

// TestScripts runs the command transcripts in testdata/script.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Dir: "testdata/script"})
}

// TestDeterminism runs a shipped scenario with GOMAXPROCS 1 and 4, twice
// each, and requires the same bytes of --json and --trace every time.
func TestDeterminism(t *testing.T) {
	dir := t.TempDir()
	scen := filepath.Join("..", "..", "scenarios", "quickstart.yaml")
	var firstJSON, firstTrace []byte
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for i, procs := range []int{1, 4, 1, 4} {
		runtime.GOMAXPROCS(procs)
		trace := filepath.Join(dir, "trace.json")
		var out, errb bytes.Buffer
		if code := run([]string{"run", scen, "--json", "--trace", trace}, &out, &errb); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		tr, err := os.ReadFile(trace)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(out.Bytes()) || !json.Valid(tr) {
			t.Fatalf("run %d: output is not valid JSON", i)
		}
		if i == 0 {
			firstJSON, firstTrace = out.Bytes(), tr
			continue
		}
		if !bytes.Equal(out.Bytes(), firstJSON) {
			t.Errorf("run %d (GOMAXPROCS %d): --json differs from the first run", i, procs)
		}
		if !bytes.Equal(tr, firstTrace) {
			t.Errorf("run %d (GOMAXPROCS %d): --trace differs from the first run", i, procs)
		}
	}
}

// TestReadmeQuickstart keeps the README's sample output true: every line it
// shows (other than "...") appears, in order, in what the quick start prints.
func TestReadmeQuickstart(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := bytes.Cut(readme, []byte("and prints:\n"))
	if !ok {
		t.Fatal(`README has no "and prints:" block`)
	}
	block, _, _ := bytes.Cut(after, []byte("\n## "))
	var out, errb bytes.Buffer
	if code := run([]string{"run", filepath.Join("..", "..", "scenarios", "quickstart.yaml")}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	got := strings.Split(out.String(), "\n")
	i := 0
	for _, line := range strings.Split(string(block), "\n") {
		if strings.TrimSpace(line) != "" && !strings.HasPrefix(line, "    ") {
			break // the end of the indented sample
		}
		line = strings.TrimPrefix(line, "    ")
		if strings.TrimSpace(line) == "" || strings.TrimSpace(line) == "..." {
			continue
		}
		for i < len(got) && got[i] != line {
			i++
		}
		if i == len(got) {
			t.Errorf("README line %q is not in the quick start's output (in order)", line)
			return
		}
	}
}

// TestGPUFailureExitStatus: a failing driver call is the environment's
// failure (exit status 1, one line naming the call), not bad input (2) and
// not a missing GPU (3); what the machine cannot run stays the input's.
func TestGPUFailureExitStatus(t *testing.T) {
	defer func(o func() (hw.Driver, error)) { openDriver = o }(openDriver)
	gpu3 := filepath.Join(t.TempDir(), "gpu3.yaml")
	if err := os.WriteFile(gpu3, []byte("name: gpu3\ntopology: dgx-h100\nthreads:\n  - {name: t, host: cpu0, ops: [kernel: {id: k, stream: gpu3/s, duration: 5 us}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  func(*hw.FakeConfig)
		args []string
		code int
		want string
	}{
		{"a launch fails", func(c *hw.FakeConfig) { c.Fail = map[string]int{"cuLaunchKernel": 719} },
			[]string{"replay", "hw-launch-bound"}, exitFail, "cuLaunchKernel: CUDA_ERROR_LAUNCH_FAILED (719)"},
		{"an allocation fails", func(c *hw.FakeConfig) { c.Fail = map[string]int{"cuMemAlloc_v2": 2} },
			[]string{"run", "hw-copies", "--backend", "hw"}, exitFail, "cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (2)"},
		{"calibration's launch fails", func(c *hw.FakeConfig) { c.Fail = map[string]int{"cuLaunchKernel": 719} },
			[]string{"calibrate", "--quick"}, exitFail, "cuLaunchKernel: CUDA_ERROR_LAUNCH_FAILED (719)"},
		{"more GPUs than the machine has", func(c *hw.FakeConfig) {},
			[]string{"replay", gpu3}, exitInput, "the program uses gpu3 (GPU 3 of the topology) but this machine has 1 GPU(s)"},
		// hw-copies' largest pinned copies, 256 MiB each way, and 1 GiB
		// beside them do not fit in 1 GiB free: the machine's state.
		{"host memory short", func(c *hw.FakeConfig) {},
			[]string{"run", "hw-copies", "--backend", "hw"}, exitFail, "not enough host memory: hw-copies needs 1.5 GiB, 512.0 MiB for the buffers of its copies"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(o func() (uint64, bool)) { freeHostMemory = o }(freeHostMemory)
			if tc.name == "host memory short" {
				freeHostMemory = func() (uint64, bool) { return 1 << 30, true }
			}
			cfg := fakeGPU()
			tc.cfg(&cfg)
			openDriver = func() (hw.Driver, error) { return hw.NewFake(cfg), nil }
			var out, errb bytes.Buffer
			code := run(tc.args, &out, &errb)
			if code != tc.code || !strings.Contains(errb.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errb.String(), tc.code, tc.want)
			}
		})
	}
}

// TestCalibrateBadTopologyBeforeTheDriver: a --topology that is not a
// topology is bad input (exit 2, at its line and column) on any machine;
// calibrate says so before it looks for a GPU, not "no NVIDIA driver".
func TestCalibrateBadTopologyBeforeTheDriver(t *testing.T) {
	defer func(o func() (hw.Driver, error)) { openDriver = o }(openDriver)
	openDriver = func() (hw.Driver, error) {
		t.Error("the driver was looked for before the topology was read")
		return nil, errors.New("no driver")
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	scen := filepath.Join(dir, "scen.yaml")
	os.WriteFile(bad, []byte("name: t\nhosts:\n  - {name: cpu0, cores: -4}\ngpus:\n  - {name: gpu0, model: H100-SXM, host: cpu0}\nlinks:\n  - {ends: [gpu0, cpu0], type: pcie5x16}\n"), 0o644)
	os.WriteFile(scen, []byte("name: s\ntopology: pcie-2gpu\nthreads: []\n"), 0o644)
	for _, tc := range []struct{ file, want string }{
		{bad, bad + ":3:25: hosts[0].cores: -4 is out of range"},
		{scen, scen + ":1:1: "},
	} {
		var out, errb bytes.Buffer
		code := run([]string{"calibrate", "--quick", "--topology", tc.file}, &out, &errb)
		if code != exitInput || !strings.HasPrefix(errb.String(), tc.want) || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("calibrate --topology %s: exit %d, stderr %q; want %d and one line starting %q", tc.file, code, errb.String(), exitInput, tc.want)
		}
	}
}

// TestCalibrateWhereCUDASeesFewerGPUs: calibrate asks NVML about the GPUs
// CUDA is shown, by their PCI addresses in CUDA's order, so that machine GPU
// i is CUDA device i (CUDA_VISIBLE_DEVICES, a scheduler's share of a node).
// Where NVML still describes more GPUs than CUDA shows, calibrate says so
// and describes the machine from the CUDA driver instead of refusing its own
// discovered topology.
func TestCalibrateWhereCUDASeesFewerGPUs(t *testing.T) {
	defer func(o func() (hw.Driver, error), d func(string, []string) (string, error)) {
		openDriver, discoverGPUs = o, d
	}(openDriver, discoverGPUs)
	openDriver = func() (hw.Driver, error) { return hw.NewFake(fakeGPU()), nil }
	shipped := func(name, as string) string {
		b, _ := topologies.ShippedSource(name)
		return strings.Replace(string(b), "name: "+name, "name: "+as, 1)
	}
	for _, tc := range []struct {
		name, give, say, want string
	}{
		{"NVML describes what CUDA shows", "", "", "discovered-calibrated"}, // give: one GPU, as the fake
		{"NVML describes more", "dgx-h100", "calibrate: NVML sees 8 GPUs, the CUDA driver 1 (is CUDA_VISIBLE_DEVICES set?); describing the machine from the CUDA driver alone", "driver-calibrated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked []string
			discoverGPUs = func(name string, busIDs []string) (string, error) {
				asked = busIDs
				if tc.give != "" {
					return shipped(tc.give, name), nil
				}
				return "name: " + name + "\nhosts: [{name: cpu0}]\ngpus: [{name: gpu0, model: H100-SXM, host: cpu0}]\nlinks: [{ends: [gpu0, cpu0], type: pcie5x16}]\n", nil
			}
			out := filepath.Join(t.TempDir(), "cal.yaml")
			var stdout, stderr bytes.Buffer
			if code := run([]string{"calibrate", "--quick", "-o", out}, &stdout, &stderr); code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			if len(asked) != 1 || asked[0] != "00000000:18:00.0" {
				t.Errorf("NVML asked about %q, want the fake's one GPU at 00000000:18:00.0", asked)
			}
			if tc.say != "" && !strings.Contains(stderr.String(), tc.say) || tc.say == "" && strings.Contains(stderr.String(), "describing") {
				t.Errorf("stderr %q", stderr.String())
			}
			y, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			top, err := topologies.Load(out, y)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(top.Machine.GPUs); n != 1 || top.Machine.Name != tc.want {
				t.Errorf("calibrated %s with %d GPUs, want %s with 1", top.Machine.Name, n, tc.want)
			}
		})
	}
}

// TestTopoDiscoverAsCUDASees: topo discover describes the GPUs CUDA shows,
// in its order, where the CUDA driver is there; --all, every GPU NVML sees.
func TestTopoDiscoverAsCUDASees(t *testing.T) {
	defer func(o func() (hw.Driver, error), d func(string, []string) (string, error)) {
		openDriver, discoverGPUs = o, d
	}(openDriver, discoverGPUs)
	cfg := fakeGPU()
	cfg.Devices = 2
	openDriver = func() (hw.Driver, error) { return hw.NewFake(cfg), nil }
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"topo", "discover"}, []string{"00000000:18:00.0", "00000000:28:00.0"}},
		{[]string{"topo", "discover", "--all"}, nil},
	} {
		var asked []string
		called := false
		discoverGPUs = func(name string, busIDs []string) (string, error) {
			asked, called = busIDs, true
			return "name: " + name + "\n", nil
		}
		var stdout, stderr bytes.Buffer
		if code := run(tc.args, &stdout, &stderr); code != exitOK || !called {
			t.Fatalf("%v: exit %d, called %v: %s", tc.args, code, called, stderr.String())
		}
		if strings.Join(asked, " ") != strings.Join(tc.want, " ") || (asked == nil) != (tc.want == nil) {
			t.Errorf("%v: NVML asked about %q, want %q", tc.args, asked, tc.want)
		}
	}
}

// TestSynopsisNamesEveryFlag: each command's --help starts with its
// synopsis, the line gpusim --help and README.md's Commands list it by, and
// that line names every flag the command takes, so no flag is known only to
// those who read the source.
func TestSynopsisNamesEveryFlag(t *testing.T) {
	var top bytes.Buffer
	if code := run([]string{"--help"}, &top, io.Discard); code != 0 {
		t.Fatalf("gpusim --help: exit %d", code)
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	flagRe := regexp.MustCompile(`(?m)^  -(\S+)`)
	for _, cmd := range [][]string{{"run"}, {"sweep"}, {"sweep", "merge"}, {"validate"}, {"topo", "show"}, {"topo", "list"},
		{"topo", "plot"}, {"topo", "dot"}, {"topo", "import"}, {"topo", "discover"}, {"nccl-tests"}, {"nvbandwidth"},
		{"p2p-test"}, {"replay"}, {"calibrate"}, {"accuracy"}} {
		var out bytes.Buffer
		if code := run(append(cmd, "--help"), &out, io.Discard); code != 0 {
			t.Errorf("gpusim %s --help: exit %d", strings.Join(cmd, " "), code)
			continue
		}
		first, _, _ := strings.Cut(out.String(), "\n")
		synopsis, ok := strings.CutPrefix(first, "usage: ")
		if !ok || !strings.HasPrefix(synopsis, "gpusim "+strings.Join(cmd, " ")) {
			t.Errorf("gpusim %s --help starts %q, want usage: and the command", strings.Join(cmd, " "), first)
			continue
		}
		if !strings.Contains(top.String(), "\n  "+synopsis+"\n") {
			t.Errorf("gpusim --help does not list %q", synopsis)
		}
		if !strings.Contains(string(readme), "\n    "+synopsis+"\n") {
			t.Errorf("README.md's Commands do not list %q", synopsis)
		}
		for _, m := range flagRe.FindAllStringSubmatch(out.String(), -1) {
			if !regexp.MustCompile(`(^|[\[| ])--?` + regexp.QuoteMeta(m[1]) + `\b`).MatchString(synopsis) {
				t.Errorf("%q does not name its flag -%s", synopsis, m[1])
			}
		}
	}
}

// TestUsageThatDidNothing: arguments that were silently ignored are usage
// errors (exit 2, one line): words after version, --set on a topology, and
// an output or name flag given an empty value (a shell variable not set).
func TestUsageThatDidNothing(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"version", "extra"}, "usage: gpusim version (it takes no arguments; got extra)\n"},
		{[]string{"validate", "dgx-h100", "--set", "a=1"}, "gpusim validate: --set sets a scenario's vars; dgx-h100 is a topology, which has none\n"},
		{[]string{"run", "quickstart", "--trace", ""}, "gpusim run: --trace was given an empty value (see gpusim run --help)\n"},
		{[]string{"run", "quickstart", "--plot="}, "gpusim run: --plot was given an empty value (see gpusim run --help)\n"},
		{[]string{"sweep", "dataloader-workers", "--csv", ""}, "gpusim sweep: --csv was given an empty value (see gpusim sweep --help)\n"},
		{[]string{"topo", "import", filepath.Join(dir, "x.txt"), "--name", ""}, "gpusim topo import: --name was given an empty value (see gpusim topo import --help)\n"},
	} {
		var out, errb bytes.Buffer
		code := run(tc.args, &out, &errb)
		if code != exitInput || errb.String() != tc.want || out.Len() != 0 {
			t.Errorf("gpusim %q: exit %d, stdout %q, stderr %q; want %d and %q", tc.args, code, out.String(), errb.String(), exitInput, tc.want)
		}
	}
	// Where empty is the default (NCCL's own choice), it is taken: a
	// script passes --algo "$NCCL_ALGO".
	if code := run([]string{"nccl-tests", "--topology", "pcie-2gpu", "--algo", "", "--proto", ""}, io.Discard, io.Discard); code != 0 {
		t.Errorf("nccl-tests --algo '' --proto '': exit %d, want 0", code)
	}
}

// TestPDFIsTheSameEveryTime: a PDF carries a fixed date (1 January 2000,
// or SOURCE_DATE_EPOCH), not the time it was drawn, and its resources in a
// fixed order, so that the same input draws the same bytes.
func TestPDFIsTheSameEveryTime(t *testing.T) {
	dir := t.TempDir()
	var pdfs [][]byte
	for _, name := range []string{"a.pdf", "b.pdf"} {
		out := filepath.Join(dir, name)
		if code := run([]string{"topo", "plot", "dgx1-v100", "-o", out}, io.Discard, io.Discard); code != 0 {
			t.Fatalf("topo plot: exit %d", code)
		}
		b, _ := os.ReadFile(out)
		pdfs = append(pdfs, b)
	}
	if !bytes.Equal(pdfs[0], pdfs[1]) {
		t.Error("two drawings of the same topology differ")
	}
	if os.Getenv("SOURCE_DATE_EPOCH") == "" {
		for _, s := range []string{"/CreationDate (D:20000101000000", "/ModDate (D:20000101000000"} {
			if !bytes.Contains(pdfs[0], []byte(s)) {
				t.Errorf("the PDF has no %q", s)
			}
		}
	}
	if d := pdfDate("1700000000"); !d.Equal(time.Unix(1700000000, 0)) {
		t.Errorf("SOURCE_DATE_EPOCH=1700000000: %v", d)
	}
}

// replaceName takes a node's name out of a route only where it stands whole.
func TestReplaceName(t *testing.T) {
	for _, c := range []struct{ s, old, want string }{
		{"gpu1 -> nvswitch -> gpu10", "gpu1", "X -> nvswitch -> gpu10"},
		{"gpu10 -> gpu1", "gpu1", "gpu10 -> X"},
		{"sw-gpu1 -> gpu1.a -> gpu1", "gpu1", "sw-gpu1 -> gpu1.a -> X"},
		{"gpu1", "gpu1", "X"},
		{"sw:gpu1 -> gpu1#2 -> gpu1", "gpu1", "sw:gpu1 -> gpu1#2 -> X"},
	} {
		if got := replaceName(c.s, c.old, "X"); got != c.want {
			t.Errorf("replaceName(%q, %q) = %q, want %q", c.s, c.old, got, c.want)
		}
	}
}

// topo show groups the pairs of a machine of more than 16 GPUs by the shape
// of their path. Here gpu0-gpu9 share sw0 on cpu0 (gpu0-gpu1 also have
// NVLink), gpu10-gpu19 share sw1 on cpu1, the sockets are joined, and gpu20
// hangs alone off cpu2: 2 NVLink pairs, 88 + 90 PCIe pairs within a switch,
// 100 staged pairs each way between the switches, and 40 pairs with gpu20
// unreachable.
func TestTopoShowGroupsPairs(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: mixed\nhosts: [{name: cpu0}, {name: cpu1}, {name: cpu2}]\ngpus:\n")
	for g := 0; g < 21; g++ {
		fmt.Fprintf(&b, "  - {name: gpu%d, model: H100-SXM, host: cpu%d}\n", g, min(g/10, 2))
	}
	b.WriteString("switches: [{name: sw0}, {name: sw1}]\nlinks:\n")
	for g := 0; g < 20; g++ {
		fmt.Fprintf(&b, "  - {ends: [gpu%d, sw%d], type: pcie5x16}\n", g, g/10)
	}
	b.WriteString("  - {ends: [sw0, cpu0], type: pcie5x16}\n  - {ends: [sw1, cpu1], type: pcie5x16}\n  - {ends: [gpu20, cpu2], type: pcie5x16}\n")
	b.WriteString("  - {ends: [cpu0, cpu1], type: upi}\n  - {ends: [gpu0, gpu1], type: nvlink4, count: 4}\n")
	tp, err := topologies.Load("mixed.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	showTopology(&out, tp)
	got := out.String()
	for _, want := range []string{
		"GPU pairs (420, grouped by the shape of their path; more than 16 GPUs):\n",
		"  2 pairs like gpu0 -> gpu1: nvlink: gpu0 -> gpu1 ",
		"  88 pairs like gpu0 -> gpu2: pcie-p2p: gpu0 -> sw0 -> gpu2 ",
		"  100 pairs like gpu0 -> gpu10: host-staged through cpu0: ",
		"  40 pairs like gpu0 -> gpu20: unreachable\n", // both ways: no route names them
		"  100 pairs like gpu10 -> gpu0: host-staged through cpu1: ",
		"  90 pairs like gpu10 -> gpu11: pcie-p2p: gpu10 -> sw1 -> gpu11 ",
		"path kinds: NV 2 P2P 178 HOST 200 - 40 ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in:\n%s", want, got[strings.Index(got, "GPU pairs"):])
		}
	}
}

// fullWriter fails every write, as /dev/full does.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// TestOutputThatDidNotArrive: a command whose output could not be written
// fails with exit status 1 and says so on stderr, whichever command it is.
func TestOutputThatDidNotArrive(t *testing.T) {
	for _, args := range [][]string{
		{"version"}, {"topo", "list"}, {"run", "quickstart"}, {"validate", "quickstart"},
		// The --json writers return the write's error themselves.
		{"run", "quickstart", "--json"}, {"nccl-tests", "--topology", "pcie-2gpu", "-b", "8", "-e", "1M", "--json"},
		{"p2p-test", "--topology", "pcie-2gpu", "--json"}, {"nvbandwidth", "--topology", "pcie-2gpu", "-t", "0", "--json"},
	} {
		var stderr bytes.Buffer
		if code := runChecked(args, fullWriter{}, &stderr); code != exitFail || stderr.String() != "gpusim: writing standard output: no space left on device\n" {
			t.Errorf("gpusim %s: exit %d, stderr %q; want 1 and the write error", strings.Join(args, " "), code, stderr.String())
		}
	}
}

// TestRunThatWouldNotFit: a scenario whose ops need more memory than is
// free is refused before its run (exit 1, one line with the estimate), not
// left to be killed; with room it runs. The quickstart's 21 ops need 21 KiB
// at bytesPerOp. The loader refuses them as it counts them, before it
// expands them (loading alone takes a fifth of that memory): "or more", as
// it has not counted the ops after them.
func TestRunThatWouldNotFit(t *testing.T) {
	defer func(f func() (uint64, bool), floor uint64) { freeMemory, memoryCheckFloor = f, floor }(freeMemory, memoryCheckFloor)
	memoryCheckFloor = 0
	for _, tc := range []struct {
		free uint64
		code int
		err  string
	}{
		{10 << 10, exitFail, "gpusim: scenarios/quickstart.yaml expands to 21 ops or more, which need about 21 KiB to simulate; 10 KiB is free here: lower its counts, or run where more memory is free\n"},
		{1 << 30, exitOK, ""},
	} {
		freeMemory = func() (uint64, bool) { return tc.free, true }
		_, errb, code := runCmd(t, "run", "quickstart")
		if code != tc.code || errb != tc.err {
			t.Errorf("%d bytes free: exit %d, stderr %q; want %d, %q", tc.free, code, errb, tc.code, tc.err)
		}
	}
}

// TestCollectiveThatWouldNotFit: a collective's plan counts in the memory
// need, each transfer at bytesPerTask: a ring all-reduce over dgx-h100's 8
// GPUs is 2 x 8 x 7 = 112 transfers (each rank sends to the next at each of
// the 2(n-1) steps of reduce-scatter then all-gather), 70 KiB, and its 8
// records 8 KiB: 78 KiB, where the records alone would fit in 20 KiB.
func TestCollectiveThatWouldNotFit(t *testing.T) {
	defer func(f func() (uint64, bool), floor uint64) { freeMemory, memoryCheckFloor = f, floor }(freeMemory, memoryCheckFloor)
	memoryCheckFloor = 0
	dir := t.TempDir()
	scen := filepath.Join(dir, "ar.yaml")
	os.WriteFile(scen, []byte("name: ar\ntopology: dgx-h100\nthreads:\n  - name: m\n    host: cpu0\n    ops:\n      - allreduce: {gpus: all, bytes: 64 MiB, stream: comm, algorithm: ring, protocol: simple}\n"), 0o644)
	freeMemory = func() (uint64, bool) { return 20 << 10, true }
	_, errb, code := runCmd(t, "run", scen)
	want := "gpusim: " + scen + ": its collectives' plans have 112 transfers (a ring over n GPUs has 2n(n-1)), which with its 1 op need about 78 KiB to simulate; 20 KiB is free here: give its collectives fewer GPUs, or run where more memory is free\n"
	if code != exitFail || errb != want {
		t.Errorf("exit %d, stderr %q; want %d, %q", code, errb, exitFail, want)
	}
}

// TestOtherCommandsThatWouldNotFit: validate, which only loads, needs a
// fifth of a run's memory (21 ops at 204 bytes, bytesPerOp/loadShare in
// whole bytes: 4,284 bytes, 4.184 KiB; room for 20 in 4 KiB) and
// refuses with less; run --backend hw and replay keep a record of each op
// as the simulator does, and are refused as run is, before they look for
// a GPU. A collective issued for its 8 GPUs at once keeps a record of each
// GPU's part: 10 of them need 80 KiB, though they are 10 ops, and their
// plan (one, which the 10 share: a ring of 2 x 8 x 7 = 112 transfers at
// bytesPerTask) 70 KiB more.
func TestOtherCommandsThatWouldNotFit(t *testing.T) {
	defer func(f func() (uint64, bool), floor uint64) { freeMemory, memoryCheckFloor = f, floor }(freeMemory, memoryCheckFloor)
	memoryCheckFloor = 0
	freeMemory = func() (uint64, bool) { return 4 << 10, true }
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"validate", "quickstart"}, "gpusim: scenarios/quickstart.yaml expands to 21 ops or more, which need about 4.184 KiB to load; 4 KiB is free here: lower its counts, or validate it where more memory is free\n"},
		{[]string{"run", "--backend", "hw", "quickstart"}, "gpusim: scenarios/quickstart.yaml expands to 21 ops or more, which need about 21 KiB to simulate; 4 KiB is free here: lower its counts, or run where more memory is free\n"},
		{[]string{"replay", "quickstart"}, "gpusim: scenarios/quickstart.yaml expands to 21 ops or more, which need about 21 KiB to simulate; 4 KiB is free here: lower its counts, or run where more memory is free\n"},
	} {
		_, errb, code := runCmd(t, tc.args...)
		if code != exitFail || errb != tc.err {
			t.Errorf("gpusim %s: exit %d, stderr %q; want 1, %q", strings.Join(tc.args, " "), code, errb, tc.err)
		}
	}
	freeMemory = func() (uint64, bool) { return 40 << 10, true }
	dir := t.TempDir()
	coll := filepath.Join(dir, "c.yaml")
	os.WriteFile(coll, []byte("name: c\ntopology: dgx-h100\nthreads:\n  - name: t\n    host: cpu0\n    ops:\n      - repeat: {count: 10, ops: [{allreduce: {gpus: all, bytes: 8, stream: s}}]}\n"), 0o644)
	_, errb, code := runCmd(t, "run", coll)
	if want := "gpusim: " + coll + " expands to 10 ops, 80 records with each GPU's part of its collectives, which need about 150 KiB to simulate; 40 KiB is free here: lower its counts, or run where more memory is free\n"; code != exitFail || errb != want {
		t.Errorf("collectives: exit %d, stderr %q; want 1, %q", code, errb, want)
	}
}

// TestSweepPointThatWouldNotFit: a sweep's point that alone needs more
// memory than is free fails as a failed point (exit 2) with the estimate.
// With 1 MiB free there is memory for 1,024 ops (bytesPerOp): the point of
// n = 10 (11 ops with its sync) runs, the point of n = 5,000 (5,001 ops,
// 5,001 KiB) fails. Where the first point is the one too large (sweep
// loads it to read the sweep) it fails the same way and the next point
// runs (the whole sweep failed, exit 1); where every point is, the first
// point's error is the sweep's (exit 1).
func TestSweepPointThatWouldNotFit(t *testing.T) {
	defer func(f func() (uint64, bool), floor uint64) { freeMemory, memoryCheckFloor = f, floor }(freeMemory, memoryCheckFloor)
	memoryCheckFloor = 0
	freeMemory = func() (uint64, bool) { return 1 << 20, true }
	dir := t.TempDir()
	scen := func(values string) string {
		name := filepath.Join(dir, "s"+strings.Trim(strings.ReplaceAll(values, ", ", "-"), "[]")+".yaml")
		src := "name: s\ntopology: pcie-2gpu\nsweep: {n: " + values + "}\nthreads:\n  - name: m\n    ops:\n      - repeat: {count: \"${n}\", ops: [{kernel: {stream: gpu0/s, duration: 1 us}}]}\n      - sync: {stream: gpu0/s}\n"
		if err := os.WriteFile(name, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return name
	}
	small := scen("[10, 5000]")
	out, _, code := runCmd(t, "sweep", small, "--json")
	if code != exitInput || strings.Count(out, "to simulate; 1 MiB is free here") != 1 || !strings.Contains(out, small+" expands to 5001 ops or more, which need about 4.884 MiB") {
		t.Errorf("exit %d, want 2 and the second point failed for memory:\n%s", code, out)
	}
	big := scen("[5000, 10]")
	out, _, code = runCmd(t, "sweep", big, "--json")
	if code != exitInput || strings.Count(out, "to simulate; 1 MiB is free here") != 1 || !strings.Contains(out, big+" expands to 5001 ops or more, which need about 4.884 MiB") || strings.Count(out, `"error"`) != 1 {
		t.Errorf("exit %d, want 2 and the first point failed for memory, the second run:\n%s", code, out)
	}
	all := scen("[5000, 6000]")
	_, errb, code := runCmd(t, "sweep", all)
	if want := "gpusim: " + all + " expands to 5001 ops or more, which need about 4.884 MiB to simulate; 1 MiB is free here: lower its counts, or run where more memory is free (the sweep's first point, which sweep loads to read the sweep)\n"; code != exitFail || errb != want {
		t.Errorf("exit %d, stderr %q; want 1, %q", code, errb, want)
	}
}

// TestTuneGC: gpusim collects at gcPercent with a memory limit of what is
// free, unless the user set GOGC or GOMEMLIMIT, which then win.
func TestTuneGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer func(f func() (uint64, bool)) { freeMemory = f }(freeMemory)
	freeMemory = func() (uint64, bool) { return 3 << 30, true }
	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	tuneGC()
	if got := debug.SetGCPercent(100); got != gcPercent {
		t.Errorf("GOGC %d, want %d", got, gcPercent)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != 3<<30 {
		t.Errorf("memory limit %d, want %d", got, 3<<30)
	}
	t.Setenv("GOGC", "50")
	tuneGC()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set: GOGC %d, want it left at 100", got)
	}
}

// TestSweepPointsShareTheMemory: with -j 4, points that each fit in the
// memory free but not two at once run one after another, rather than four
// at once, and the table is -j 1's. With 1 MiB free (1,024 ops), each
// point of n = 600 (601 ops, 601 KiB with its sync) fits alone, two do
// not; none fails. The points are checked against the memory free when
// the sweep started, whatever the others take meanwhile: freeMemory says
// less after its first answer, and no point fails for it.
func TestSweepPointsShareTheMemory(t *testing.T) {
	defer func(f func() (uint64, bool), floor uint64) { freeMemory, memoryCheckFloor = f, floor }(freeMemory, memoryCheckFloor)
	memoryCheckFloor = 0
	name := filepath.Join(t.TempDir(), "s.yaml")
	src := "name: s\ntopology: pcie-2gpu\nsweep: {n: [600, 601, 602, 603, 604, 605]}\nthreads:\n  - name: m\n    ops:\n      - repeat: {count: \"${n}\", ops: [{kernel: {stream: gpu0/s, duration: 1 us}}]}\n      - sync: {stream: gpu0/s}\n"
	if err := os.WriteFile(name, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var outs [2]string
	for k, j := range []string{"1", "4"} {
		calls := 0
		freeMemory = func() (uint64, bool) {
			// The sweep's first load reads it, then the gate: from the
			// third call on, as if the points running took it all.
			calls++
			if calls > 2 {
				return 0, true
			}
			return 1 << 20, true
		}
		// Runs that overlap would show here: each lasts 20 ms more.
		var mu sync.Mutex
		running, peak := 0, 0
		sweepRunHook = func(delta int) {
			mu.Lock()
			running += delta
			peak = max(peak, running)
			mu.Unlock()
			if delta > 0 {
				time.Sleep(20 * time.Millisecond)
			}
		}
		out, errb, code := runCmd(t, "sweep", name, "--json", "-j", j)
		sweepRunHook = nil
		if code != exitOK || strings.Contains(out, "memory") {
			t.Fatalf("-j %s: exit %d, want 0 and no point failed:\n%s%s", j, code, out, errb)
		}
		if peak != 1 {
			t.Errorf("-j %s: %d points ran at once, want 1", j, peak)
		}
		outs[k] = out
	}
	if outs[0] != outs[1] {
		t.Errorf("-j 4's table differs from -j 1's:\n%s\n%s", outs[1], outs[0])
	}
}

// TestMemoryGate: the gate lets takes run while what they took fits, and
// holds the one that does not until enough is given back; a need above
// the whole waits for all the others; an unknown amount never holds; a
// point resizes what it holds only to what is free at once.
func TestMemoryGate(t *testing.T) {
	g := &memoryGate{total: 10, left: 10, known: true}
	g.cond = sync.NewCond(&g.mu)
	a := g.take(6)
	b := g.take(4)
	if a != 6 || b != 4 || g.left != 0 {
		t.Fatalf("took %d and %d, %d left; want 6, 4, 0", a, b, g.left)
	}
	done := make(chan uint64)
	go func() { done <- g.take(25) }() // at most the whole: 10
	select {
	case <-done:
		t.Fatal("a take passed with nothing left")
	case <-time.After(50 * time.Millisecond):
	}
	g.give(a)
	select {
	case <-done:
		t.Fatal("a take of the whole passed with 6 of 10 given back")
	case <-time.After(50 * time.Millisecond):
	}
	g.give(b)
	if c := <-done; c != 10 || g.left != 0 {
		t.Errorf("took %d, %d left; want 10, 0", c, g.left)
	}
	open := &memoryGate{}
	if took := open.take(1 << 40); took != 0 {
		t.Errorf("an unknown amount: took %d, want 0", took)
	}
	// resize: a point that loaded holding 4 of 10 shrinks to 3 or grows
	// to what is free at once; past that it holds nothing, and says so.
	g.left = 10
	x := g.take(4)
	if got, ok := g.resize(x, 3); !ok || got != 3 || g.left != 7 {
		t.Errorf("shrink 4 to 3: %d, %v, %d left; want 3, true, 7", got, ok, g.left)
	}
	if got, ok := g.resize(3, 9); !ok || got != 9 || g.left != 1 {
		t.Errorf("grow 3 to 9: %d, %v, %d left; want 9, true, 1", got, ok, g.left)
	}
	y := g.take(1)
	if got, ok := g.resize(y, 5); ok || got != 0 || g.left != 1 {
		t.Errorf("grow 1 to 5 with nothing free: %d, %v, %d left; want 0, false, 1 (given back)", got, ok, g.left)
	}
}

// TestVarsAreTheRunsOwn: --json names the vars a run used, --set values
// included, in the file's order; with a topology given in place of one a
// var names, the var is said to be unused (the summary named the machine
// it did not run on), and a --set of it changes nothing and is refused.
func TestVarsAreTheRunsOwn(t *testing.T) {
	name := filepath.Join(t.TempDir(), "s.yaml")
	src := "name: s\ntopology: ${machine}\nvars: {machine: pcie-2gpu, d: 1 us}\nthreads:\n  - name: m\n    host: cpu0\n    ops:\n      - kernel: {stream: gpu0/s, duration: \"${d}\"}\n"
	if err := os.WriteFile(name, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errb, code := runCmd(t, "run", name, "--json", "--set", "d=2 us")
	if want := `{"scenario":"s","topology":"pcie-2gpu","vars":{"machine":"pcie-2gpu","d":"2 us"},"makespan_ns":`; code != 0 || !strings.HasPrefix(out, want) {
		t.Errorf("exit %d (%s), JSON starts %.100q; want %q", code, errb, out, want)
	}
	out, errb, code = runCmd(t, "run", name, "--topology", "dgx-h100")
	if want := "s on dgx-h100: makespan 3.7 us (1 op, "; code != 0 || !strings.HasPrefix(out, want) || !strings.Contains(out, "\nvars: d=1 us (machine: unused, the topology given replaces the scenario's)\n") {
		t.Errorf("--topology: exit %d (%s):\n%s", code, errb, out)
	}
	_, errb, code = runCmd(t, "run", name, "--topology", "dgx-h100", "--set", "machine=dgx-b200")
	if want := "gpusim run: --set machine: only the topology field of " + name + " refers to ${machine}, and the topology given in its place replaces it, so its value would change nothing\n"; code != exitInput || errb != want {
		t.Errorf("--set of the replaced var: exit %d, %q; want 2 and %q", code, errb, want)
	}
}

// TestHWRunSaysWhereHostsRan: on a machine of two NUMA nodes, a run on
// the GPUs says which node each host of the topology the program uses
// stands for (the node of the GPUs the topology attaches to it).
func TestHWRunSaysWhereHostsRan(t *testing.T) {
	defer func(o func() (hw.Driver, error)) { openDriver = o }(openDriver)
	scen := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(scen, []byte("name: s\ntopology: dgx-h100\nthreads:\n  - {name: t, host: cpu1, ops: [copy: {id: up, from: cpu1, to: gpu5, bytes: 1 MB, stream: gpu5/s}]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := fakeGPU()
	cfg.Devices, cfg.NUMA = 8, []int{0, 0, 0, 0, 1, 1, 1, 1}
	openDriver = func() (hw.Driver, error) { return hw.NewFake(cfg), nil }
	var out, errb bytes.Buffer
	if code := run([]string{"run", scen, "--backend", "hw"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	const want = "hw: threads and host memory on this machine's NUMA nodes where the topology's GPUs are: cpu1 on node 1\n"
	if !strings.Contains(errb.String(), want) {
		t.Errorf("stderr %q lacks %q", errb.String(), want)
	}
	// replay --json says it too.
	out.Reset()
	errb.Reset()
	if code := run([]string{"replay", scen, "--json"}, &out, &errb); code != 0 {
		t.Fatalf("replay: exit %d: %s", code, errb.String())
	}
	var doc struct {
		HostNUMANodes map[string]int `json:"host_numa_nodes"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("replay --json: %v\n%s", err, out.String())
	}
	if len(doc.HostNUMANodes) != 1 || doc.HostNUMANodes["cpu1"] != 1 {
		t.Errorf("replay --json host_numa_nodes = %v, want cpu1 on node 1", doc.HostNUMANodes)
	}
}

// TestMatricesOfTooManyGPUs: p2p-test, and nvbandwidth's device-to-device
// tests, run a simulation for each GPU pair: on a topology of more than
// maxMatrixGPUs GPUs they are refused at once (exit 2), while nvbandwidth's
// tests of each GPU and its host still run.
func TestMatricesOfTooManyGPUs(t *testing.T) {
	topo := manyGPUs(t, maxMatrixGPUs+1)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"p2p-test", "--topology", topo}, "gpusim p2p-test: many has 129 GPUs: its matrices are predicted for up to 128 GPUs (a run for each of its 16512 pairs would take minutes); use a topology of fewer GPUs\n"},
		{[]string{"nvbandwidth", "--topology", topo, "-t", "host_to_device_memcpy_ce", "-t", "device_to_device_memcpy_read_ce"}, "gpusim nvbandwidth: many has 129 GPUs: device_to_device_memcpy_read_ce's matrix is predicted for up to 128 GPUs (a run for each of its 16512 pairs would take minutes); use a topology of fewer GPUs\n"},
	} {
		_, errb, code := runCmd(t, tc.args...)
		if code != exitInput || errb != tc.want {
			t.Errorf("%v: exit %d, stderr %q; want 2, %q", tc.args[0], code, errb, tc.want)
		}
	}
	out, errb, code := runCmd(t, "nvbandwidth", "--topology", topo, "-t", "host_to_device_memcpy_ce")
	if code != exitOK || !strings.Contains(out, "Running host_to_device_memcpy_ce.") {
		t.Errorf("nvbandwidth's host-to-device test on 129 GPUs: exit %d, stderr %q", code, errb)
	}
}

// TestNCCLTestsOfTooManyRanks: nccl-tests on more than maxNCCLRanks ranks
// is refused at once (exit 2), not left to run for minutes: a ring over
// 577 would be 2 x 577 x 576 = 664,704 transfers a size.
func TestNCCLTestsOfTooManyRanks(t *testing.T) {
	topo := manyGPUs(t, maxNCCLRanks+1)
	_, errb, code := runCmd(t, "nccl-tests", "--topology", topo, "--op", "all_reduce")
	want := "gpusim nccl-tests: 577 ranks: predicted for up to 576 (a ring over n ranks is 2n(n-1) transfers at each size: 664704 here); give fewer with -g, or a topology of fewer GPUs\n"
	if code != exitInput || errb != want {
		t.Errorf("exit %d, stderr %q; want 2, %q", code, errb, want)
	}
}

// manyGPUs writes a topology "many" of n H100s on an NVSwitch and a PCIe
// switch, and returns its path.
func manyGPUs(t *testing.T, n int) string {
	var b strings.Builder
	b.WriteString("name: many\nhosts: [{name: cpu0}]\nswitches: [{name: nvs, kind: nvswitch}, {name: pcie}]\ngpus:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - {name: gpu%d, model: H100-SXM, host: cpu0}\n", i)
	}
	b.WriteString("links:\n  - {ends: [pcie, cpu0], type: pcie5x16}\n")
	for i := range n {
		fmt.Fprintf(&b, "  - {ends: [gpu%d, nvs], type: nvlink4, count: 18}\n  - {ends: [gpu%d, pcie], type: pcie5x16}\n", i, i)
	}
	topo := filepath.Join(t.TempDir(), "many.yaml")
	os.WriteFile(topo, []byte(b.String()), 0o644)
	return topo
}

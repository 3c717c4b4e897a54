package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"gpusim/hw"
	"gpusim/topologies"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"gpusim": func() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) },
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
	} {
		t.Run(tc.name, func(t *testing.T) {
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

// TestCalibrateWhereCUDASeesFewerGPUs: NVML describes every GPU, but CUDA
// may be shown fewer (CUDA_VISIBLE_DEVICES): calibrate says so and
// describes the machine from the CUDA driver instead of refusing its own
// discovered topology.
func TestCalibrateWhereCUDASeesFewerGPUs(t *testing.T) {
	defer func(o func() (hw.Driver, error), d func(string) (string, error)) {
		openDriver, discoverForCalibrate = o, d
	}(openDriver, discoverForCalibrate)
	openDriver = func() (hw.Driver, error) { return hw.NewFake(fakeGPU()), nil }
	discoverForCalibrate = func(name string) (string, error) {
		b, _ := topologies.ShippedSource("dgx-h100") // eight GPUs
		return strings.Replace(string(b), "name: dgx-h100", "name: "+name, 1), nil
	}
	out := filepath.Join(t.TempDir(), "cal.yaml")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"calibrate", "--quick", "-o", out}, &stdout, &stderr); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "calibrate: NVML sees 8 GPUs, the CUDA driver 1 (is CUDA_VISIBLE_DEVICES set?); describing the machine from the CUDA driver alone") {
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
	if n := len(top.Machine.GPUs); n != 1 || top.Machine.Name != "driver-calibrated" {
		t.Errorf("calibrated %s with %d GPUs, want driver-calibrated with 1", top.Machine.Name, n)
	}
}

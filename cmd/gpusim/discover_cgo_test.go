//go:build cgo

package main

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"gpusim/hw"
	"gpusim/hw/discover"
	"gpusim/topologies"
)

// TestNVMLUnavailable: discovery's failures that mean no GPU can be reached
// here (no library, no driver, no permission, no GPU) exit 3, told apart by
// NVML's code; NVML's other failures are the environment's (1); anything
// else is left as it is.
func TestNVMLUnavailable(t *testing.T) {
	for _, c := range []struct {
		err  error
		cuda bool // the CUDA driver opened
		code int
		say  string // how the line starts
	}{
		// The CUDA driver there without NVML (a container with only the
		// compute capability) is not "no NVIDIA driver found".
		{&discover.Error{Call: "Init", Code: nvml.ERROR_LIBRARY_NOT_FOUND}, true, exitNoGPU, "gpusim: the CUDA driver is here, but NVML's library libnvidia-ml.so.1 was not found: "},
		{&discover.Error{Call: "Init", Code: nvml.ERROR_LIBRARY_NOT_FOUND}, false, exitNoGPU, "gpusim: no NVIDIA driver found: NVML's library libnvidia-ml.so.1 was not found (nvml: Init: ERROR_LIBRARY_NOT_FOUND)\n"},
		{&discover.Error{Call: "Init", Code: nvml.ERROR_DRIVER_NOT_LOADED}, false, exitNoGPU, "gpusim: no NVIDIA driver found: "},
		{fmt.Errorf("wrapped: %w", &discover.Error{Call: "Init", Code: nvml.ERROR_NO_PERMISSION}), true, exitNoGPU, "gpusim: no permission to query the GPUs: "},
		{discover.ErrNoGPU, true, exitNoGPU, "gpusim: NVML reports no GPU"},
		{&discover.Error{Call: "GPU2: DeviceGetName", Code: nvml.ERROR_GPU_IS_LOST}, true, exitFail, "gpusim: nvml: GPU2"},
		{errors.New("discover: something else"), true, exitInput, "discover: "},
	} {
		var stderr strings.Builder
		if got := report(nvmlUnavailable(c.err, c.cuda), &stderr); got != c.code {
			t.Errorf("%v: exit %d, want %d", c.err, got, c.code)
		}
		if !strings.HasPrefix(stderr.String(), c.say) || !strings.Contains(stderr.String(), c.err.Error()) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%v: said %q, want one line starting %q", c.err, stderr.String(), c.say)
		}
	}
}

// TestTopoDiscoverWithoutNVML: where the CUDA driver is there and NVML's
// library is not (as on this machine, with the fake driver standing in for
// CUDA's), topo discover says in one line that libnvidia-ml.so.1 was not
// found and how to get it, and exits 3, with --all too (which needs no CUDA
// driver, but opens it to say this). Skipped where NVML loads.
func TestTopoDiscoverWithoutNVML(t *testing.T) {
	lib := nvml.New()
	if r := lib.Init(); r != nvml.ERROR_LIBRARY_NOT_FOUND {
		if r == nvml.SUCCESS {
			lib.Shutdown()
		}
		t.Skipf("NVML's Init says %v here, not that its library is missing", r)
	}
	defer func(o func() (hw.Driver, error)) { openDriver = o }(openDriver)
	openDriver = func() (hw.Driver, error) { return hw.NewFake(fakeGPU()), nil }
	for _, args := range [][]string{{"topo", "discover"}, {"topo", "discover", "--all"}} {
		var stdout, stderr bytes.Buffer
		code := run(args, &stdout, &stderr)
		want := "gpusim: the CUDA driver is here, but NVML's library libnvidia-ml.so.1 was not found: discovery reads the GPUs and their links through NVML, which comes with the NVIDIA driver (in a container, with the utility driver capability: NVIDIA_DRIVER_CAPABILITIES=compute,utility) (nvml: Init: ERROR_LIBRARY_NOT_FOUND)\n"
		if code != exitNoGPU || stderr.String() != want || stdout.Len() != 0 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d and %q", args, code, stdout.String(), stderr.String(), exitNoGPU, want)
		}
	}
}

// TestCalibrateWithoutNVMLSaysWhatItAssumed: without NVML, calibrate
// describes the GPUs from the CUDA driver alone, which names each GPU but
// not its PCIe link. A name of no known model is modelled as an H100-SXM
// and every link as PCIe Gen5 x16; the calibrated YAML says so beside each
// assumed value, and one warning line on stderr sums it up. A known name
// (NVIDIA H200) gets its own model and no such comment.
func TestCalibrateWithoutNVMLSaysWhatItAssumed(t *testing.T) {
	defer func(o func() (hw.Driver, error), d func(string, []string) (string, error)) {
		openDriver, discoverGPUs = o, d
	}(openDriver, discoverGPUs)
	discoverGPUs = func(string, []string) (string, error) {
		return "", &discover.Error{Call: "Init", Code: nvml.ERROR_LIBRARY_NOT_FOUND}
	}
	const link = "  - {ends: [gpu0, cpu0], type: pcie5x16, " // then what calibration set
	const linkComment = "} # assumed: PCIe Gen5 x16 (the CUDA driver does not report the PCIe generation or width); calibration measures its bandwidth and latency\n"
	const pcieWarning = "the CUDA driver does not report the PCIe generation or width: each GPU's link to the host is assumed PCIe Gen5 x16 (calibration measures its bandwidth and latency)"
	for _, tc := range []struct {
		name, gpu, warning string
	}{
		{"Fake GPU 0",
			"  - {name: gpu0, model: H100-SXM, host: cpu0, *} # Fake GPU 0; assumed: Fake GPU 0 is not a known model; memory_efficiency and roofline peaks are relative to H100-SXM\n",
			"calibrate: warning: gpu0 (Fake GPU 0) of no known model, assumed H100-SXM (memory_efficiency and roofline peaks are relative to it); " + pcieWarning + "\n"},
		{"NVIDIA H200",
			"  - {name: gpu0, model: H200-SXM, host: cpu0, *} # NVIDIA H200\n",
			"calibrate: warning: " + pcieWarning + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := fakeGPU()
			cfg.Name = tc.name
			openDriver = func() (hw.Driver, error) { return hw.NewFake(cfg), nil }
			var stdout, stderr bytes.Buffer
			if code := run([]string{"calibrate", "--quick"}, &stdout, &stderr); code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
			if n := strings.Count(stderr.String(), tc.warning); n != 1 || strings.Count(stderr.String(), "assumed") != strings.Count(tc.warning, "assumed") {
				t.Errorf("stderr %q\nwant the warning %q once, and nothing else assumed", stderr.String(), tc.warning)
			}
			y := stdout.String()
			gpu := regexp.MustCompile("(?m)^" + strings.ReplaceAll(regexp.QuoteMeta(strings.TrimSuffix(tc.gpu, "\n")), `\*`, "[^}]*") + "$")
			if !gpu.MatchString(y) {
				t.Errorf("no GPU line like %q in\n%s", tc.gpu, y)
			}
			if i := strings.Index(y, link); i < 0 || !strings.HasPrefix(y[i+strings.Index(y[i:], "}"):], linkComment) {
				t.Errorf("no link line %q...%q in\n%s", link, linkComment, y)
			}
			if _, err := topologies.Load("calibrated.yaml", stdout.Bytes()); err != nil {
				t.Error(err)
			}
		})
	}
}

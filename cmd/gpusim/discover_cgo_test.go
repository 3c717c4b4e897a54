//go:build cgo

package main

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"gpusim/hw"
	"gpusim/hw/discover"
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

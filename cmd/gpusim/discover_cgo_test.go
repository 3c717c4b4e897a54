//go:build cgo

package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"gpusim/hw/discover"
)

// TestNVMLUnavailable: discovery's failures that mean no GPU can be reached
// here (no library, no driver, no permission, no GPU) exit 3, told apart by
// NVML's code; NVML's other failures are the environment's (1); anything
// else is left as it is.
func TestNVMLUnavailable(t *testing.T) {
	for _, c := range []struct {
		err  error
		code int
	}{
		{&discover.Error{Call: "Init", Code: nvml.ERROR_LIBRARY_NOT_FOUND}, exitNoGPU},
		{&discover.Error{Call: "Init", Code: nvml.ERROR_DRIVER_NOT_LOADED}, exitNoGPU},
		{fmt.Errorf("wrapped: %w", &discover.Error{Call: "Init", Code: nvml.ERROR_NO_PERMISSION}), exitNoGPU},
		{discover.ErrNoGPU, exitNoGPU},
		{&discover.Error{Call: "GPU2: DeviceGetName", Code: nvml.ERROR_GPU_IS_LOST}, exitFail},
		{errors.New("discover: something else"), exitInput},
	} {
		var stderr strings.Builder
		if got := report(nvmlUnavailable(c.err), &stderr); got != c.code {
			t.Errorf("%v: exit %d, want %d", c.err, got, c.code)
		}
		if !strings.Contains(stderr.String(), c.err.Error()) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("%v: said %q", c.err, stderr.String())
		}
	}
}

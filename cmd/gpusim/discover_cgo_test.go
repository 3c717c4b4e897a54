//go:build cgo

package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"gpusim/hw"
	"gpusim/hw/discover"
)

// TestNVMLUnavailable: discovery's failures that mean no GPU can be reached
// here (no library, no driver, no permission, no GPU) exit 3, told apart by
// NVML's code; others stay errors.
func TestNVMLUnavailable(t *testing.T) {
	for _, c := range []struct {
		err         error
		unavailable bool
	}{
		{&discover.Error{Call: "Init", Code: nvml.ERROR_LIBRARY_NOT_FOUND}, true},
		{&discover.Error{Call: "Init", Code: nvml.ERROR_DRIVER_NOT_LOADED}, true},
		{fmt.Errorf("wrapped: %w", &discover.Error{Call: "Init", Code: nvml.ERROR_NO_PERMISSION}), true},
		{discover.ErrNoGPU, true},
		{&discover.Error{Call: "GPU2: DeviceGetName", Code: nvml.ERROR_GPU_IS_LOST}, false},
		{errors.New("discover: something else"), false},
	} {
		got := nvmlUnavailable(c.err)
		if hw.IsUnavailable(got) != c.unavailable {
			t.Errorf("%v: unavailable %v, want %v", c.err, hw.IsUnavailable(got), c.unavailable)
		}
		if !c.unavailable && got != c.err {
			t.Errorf("%v changed to %v", c.err, got)
		}
	}
}

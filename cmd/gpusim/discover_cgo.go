//go:build cgo

package main

import (
	"errors"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"gpusim/hw"
	"gpusim/hw/discover"
)

// discoverYAML reads this machine through NVML into a topology.
func discoverYAML(name string) (string, error) {
	y, err := discoverRaw(name)
	if err != nil {
		return "", nvmlUnavailable(err)
	}
	return y, nil
}

// discoverRaw is discoverYAML with NVML's own error, for callers that fall
// back on something else.
func discoverRaw(name string) (string, error) { return discoverVisible(name, nil) }

// discoverVisible is discoverRaw of the GPUs at the given PCI addresses, in
// that order: those CUDA is shown, as it numbers them (nil: all, in NVML's
// order).
func discoverVisible(name string, busIDs []string) (string, error) {
	m, err := discover.Discover(nvml.New())
	if err != nil {
		return "", err
	}
	if busIDs != nil {
		if m, err = m.Select(busIDs); err != nil {
			return "", err
		}
	}
	return m.Topology(name)
}

// nvmlUnavailable turns Discover's errors that mean "no GPU to be had here"
// into UnavailableErrors (exit status 3), by NVML's code; other failures of
// NVML are the environment's (exit status 1).
func nvmlUnavailable(err error) error {
	if errors.Is(err, discover.ErrNoGPU) {
		return &hw.UnavailableError{What: "NVML reports no GPU (" + err.Error() + ")"}
	}
	var e *discover.Error
	if !errors.As(err, &e) {
		return err
	}
	switch e.Code {
	case nvml.ERROR_LIBRARY_NOT_FOUND, nvml.ERROR_DRIVER_NOT_LOADED:
		return &hw.UnavailableError{What: "no NVIDIA driver found: " + err.Error()}
	case nvml.ERROR_NO_PERMISSION:
		return &hw.UnavailableError{What: "no permission to query the GPUs: " + err.Error()}
	}
	return &failError{err}
}

// presetFor is the GPU preset for a device name the driver reports.
func presetFor(device string) string {
	if p, _ := discover.GPUPreset(device); p != "" {
		return p
	}
	return "H100-SXM"
}

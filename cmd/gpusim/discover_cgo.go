//go:build cgo

package main

import (
	"errors"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"gpusim/hw"
	"gpusim/hw/discover"
)

// discoverVisible reads, through NVML, the GPUs at the given PCI addresses
// in that order (those CUDA is shown, as it numbers them), or every GPU in
// NVML's order where busIDs is nil, into a topology. Its errors are NVML's
// own (see nvmlUnavailable).
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

// notShown says err is Select's: CUDA shows a GPU NVML does not know.
func notShown(err error) bool { return errors.Is(err, discover.ErrNotShown) }

// nvmlUnavailable turns Discover's errors that mean "no GPU to be had here"
// into UnavailableErrors (exit status 3), by NVML's code; other failures of
// NVML are the environment's (exit status 1). cuda says the CUDA driver
// opened: then a missing NVML library is NVML's alone (a container started
// with NVIDIA_DRIVER_CAPABILITIES=compute gets libcuda but not NVML).
func nvmlUnavailable(err error, cuda bool) error {
	if errors.Is(err, discover.ErrNoGPU) {
		return &hw.UnavailableError{What: "NVML reports no GPU (" + err.Error() + ")"}
	}
	var e *discover.Error
	if !errors.As(err, &e) {
		return err
	}
	switch e.Code {
	case nvml.ERROR_LIBRARY_NOT_FOUND:
		if cuda {
			return &hw.UnavailableError{What: "the CUDA driver is here, but NVML's library libnvidia-ml.so.1 was not found: discovery reads the GPUs and their links through NVML, which comes with the NVIDIA driver (in a container, with the utility driver capability: NVIDIA_DRIVER_CAPABILITIES=compute,utility) (" + err.Error() + ")"}
		}
		return &hw.UnavailableError{What: "no NVIDIA driver found: NVML's library libnvidia-ml.so.1 was not found (" + err.Error() + ")"}
	case nvml.ERROR_DRIVER_NOT_LOADED:
		return &hw.UnavailableError{What: "no NVIDIA driver found: " + err.Error()}
	case nvml.ERROR_NO_PERMISSION:
		return &hw.UnavailableError{What: "no permission to query the GPUs: " + err.Error()}
	}
	return &failError{err}
}

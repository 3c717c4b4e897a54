//go:build cgo

package main

import (
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"gpusim/hw"
	"gpusim/hw/discover"
)

// discoverYAML reads this machine through NVML into a topology.
func discoverYAML(name string) (string, error) {
	m, err := discover.Discover(nvml.New())
	if err != nil {
		if strings.Contains(err.Error(), "LIBRARY_NOT_FOUND") || strings.Contains(err.Error(), "DRIVER_NOT_LOADED") {
			return "", &hw.UnavailableError{What: "no NVIDIA driver found: " + err.Error()}
		}
		if strings.Contains(err.Error(), "NO_PERMISSION") {
			return "", &hw.UnavailableError{What: "no permission to query the GPUs: " + err.Error()}
		}
		return "", err
	}
	return m.Topology(name)
}

// presetFor is the GPU preset for a device name the driver reports.
func presetFor(device string) string {
	if p, _ := discover.GPUPreset(device); p != "" {
		return p
	}
	return "H100-SXM"
}

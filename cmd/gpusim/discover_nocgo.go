//go:build !cgo

package main

import (
	"errors"

	"gpusim/hw"
)

// discoverYAML needs NVML, which go-nvml reaches through cgo.
func discoverYAML(string) (string, error) {
	return "", &hw.UnavailableError{What: "gpusim topo discover needs NVML, and this gpusim was built without cgo (build with CGO_ENABLED=1)"}
}

// discoverVisible is discoverYAML of some GPUs, with NVML's own error.
func discoverVisible(string, []string) (string, error) {
	return "", errors.New("NVML is reached through cgo, and this gpusim was built without it")
}

// nvmlUnavailable: without cgo there is no NVML to reach.
func nvmlUnavailable(error) error { _, err := discoverYAML(""); return err }

func presetFor(string) string { return "H100-SXM" }

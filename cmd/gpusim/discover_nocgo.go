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

// discoverRaw is discoverYAML with NVML's own error.
func discoverRaw(string) (string, error) {
	return "", errors.New("NVML is reached through cgo, and this gpusim was built without it")
}

func presetFor(string) string { return "H100-SXM" }

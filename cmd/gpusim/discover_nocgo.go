//go:build !cgo

package main

import "gpusim/hw"

// discoverYAML needs NVML, which go-nvml reaches through cgo.
func discoverYAML(string) (string, error) {
	return "", &hw.UnavailableError{What: "gpusim topo discover needs NVML, and this gpusim was built without cgo (build with CGO_ENABLED=1)"}
}

func presetFor(string) string { return "H100-SXM" }

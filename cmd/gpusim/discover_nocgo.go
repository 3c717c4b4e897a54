//go:build !cgo

package main

import "gpusim/hw"

// discoverVisible needs NVML, which go-nvml reaches through cgo.
func discoverVisible(string, []string) (string, error) { return "", errNoNVML }

var errNoNVML = &hw.UnavailableError{What: "NVML is reached through cgo, and this gpusim was built without it (build with CGO_ENABLED=1)"}

// nvmlUnavailable: without cgo there is no NVML to reach.
func nvmlUnavailable(err error, _ bool) error { return err }

func notShown(error) bool { return false }

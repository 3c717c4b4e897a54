//go:build !linux

package hw

import "runtime"

// Library is the CUDA driver's file name on Linux.
const Library = "libcuda.so.1"

// Open reports that gpusim drives GPUs only on Linux.
func Open() (Driver, error) {
	return nil, &UnavailableError{What: "no NVIDIA driver found: gpusim drives GPUs on Linux only (this is " + runtime.GOOS + ")"}
}

// OpenLibrary reports that gpusim drives GPUs only on Linux.
func OpenLibrary(string) (Driver, error) { return Open() }

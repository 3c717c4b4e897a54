//go:build !linux

package main

// addressRoom: no limit on the address space is read on this system.
func addressRoom() (uint64, bool) { return 0, false }

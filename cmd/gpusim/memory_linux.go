package main

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// addressRoom is what a limit on the address space (ulimit -v) leaves this
// process: the limit less its size now (VmSize of /proc/self/status).
func addressRoom() (uint64, bool) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &rl); err != nil || rl.Cur == ^uint64(0) {
		return 0, false
	}
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmSize:"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				if kb, err := strconv.ParseUint(f[0], 10, 64); err == nil {
					if size := kb << 10; size < rl.Cur {
						return rl.Cur - size, true
					}
					return 0, true
				}
			}
		}
	}
	return 0, false
}

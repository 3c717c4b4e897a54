//go:build linux

package hw

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// SystemNUMA is this machine's NUMA placement, read from sysfs.
func SystemNUMA() NUMA { return sysNUMA{root: "/sys"} }

// sysNUMA reads the NUMA layout under root (a sysfs) and binds threads
// with sched_setaffinity.
type sysNUMA struct{ root string }

func (s sysNUMA) read(path ...string) (string, error) {
	b, err := os.ReadFile(filepath.Join(append([]string{s.root}, path...)...))
	return strings.TrimSpace(string(b)), err
}

func (s sysNUMA) Nodes() int {
	v, err := s.read("devices/system/node/has_cpu")
	if err != nil {
		return 1
	}
	nodes, err := parseCPUList(v) // the same list syntax, of node numbers
	if err != nil || len(nodes) == 0 {
		return 1
	}
	return len(nodes)
}

func (s sysNUMA) DeviceNode(domain, bus, device int) int {
	v, err := s.read("bus/pci/devices", fmt.Sprintf("%04x:%02x:%02x.0", domain, bus, device), "numa_node")
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// cpuMask is a sched_setaffinity mask; 4096 CPUs, grown where the kernel
// has more.
type cpuMask []uint64

func getAffinity() (cpuMask, error) {
	for words := 64; words <= 1<<14; words *= 2 {
		m := make(cpuMask, words)
		_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, 0, uintptr(words*8), uintptr(unsafe.Pointer(&m[0])))
		if e == 0 {
			return m, nil
		}
		if e != syscall.EINVAL {
			return nil, e
		}
	}
	return nil, errors.New("sched_getaffinity: more CPUs than gpusim can name")
}

func setAffinity(m cpuMask) error {
	_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0, uintptr(len(m)*8), uintptr(unsafe.Pointer(&m[0])))
	if e != 0 {
		return e
	}
	return nil
}

func (s sysNUMA) Pin(node int) (func() error, error) {
	v, err := s.read("devices/system/node", "node"+strconv.Itoa(node), "cpulist")
	if err != nil {
		return nil, err
	}
	cpus, err := parseCPUList(v)
	if err != nil {
		return nil, err
	}
	if len(cpus) == 0 {
		return nil, fmt.Errorf("node %d has no CPUs", node)
	}
	old, err := getAffinity()
	if err != nil {
		return nil, err
	}
	want := make(cpuMask, len(old))
	some := false
	for _, c := range cpus {
		if w := c / 64; w < len(old) && old[w]&(1<<(c%64)) != 0 {
			want[w] |= 1 << (c % 64)
			some = true
		}
	}
	if !some {
		return nil, fmt.Errorf("none of its CPUs (%s) is one this process may run on", v)
	}
	if err := setAffinity(want); err != nil {
		return nil, fmt.Errorf("sched_setaffinity: %w", err)
	}
	return func() error { return setAffinity(old) }, nil
}

//go:build linux

package hw

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The sysfs reading, on a made-up tree: node count from has_cpu, a
// device's node from its numa_node (-1 and absence are unknown).
func TestSysNUMAReads(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"devices/system/node/has_cpu":             "0-1\n",
		"bus/pci/devices/0000:18:00.0/numa_node":  "1\n",
		"bus/pci/devices/0001:2a:00.0/numa_node":  "0\n",
		"bus/pci/devices/0000:28:00.0/numa_node":  "-1\n",
		"bus/pci/devices/0000:38:00.0/numa_node":  "x\n",
		"devices/system/node/node7/cpulist":       "100000\n",
		"devices/system/node/node8/cpulist":       "1-0\n",
		"devices/system/node/node9/cpulist_wrong": "0\n",
		"devices/system/node/node10/cpulist":      "\n",
	})
	s := sysNUMA{root: root}
	if n := s.Nodes(); n != 2 {
		t.Errorf("Nodes = %d, want 2", n)
	}
	for _, c := range []struct{ dom, bus, dev, want int }{{0, 0x18, 0, 1}, {1, 0x2a, 0, 0}, {0, 0x28, 0, -1}, {0, 0x38, 0, -1}, {0, 0x48, 0, -1}} {
		if got := s.DeviceNode(c.dom, c.bus, c.dev); got != c.want {
			t.Errorf("DeviceNode(%04x:%02x:%02x) = %d, want %d", c.dom, c.bus, c.dev, got, c.want)
		}
	}
	if n := (sysNUMA{root: t.TempDir()}).Nodes(); n != 1 {
		t.Errorf("Nodes with no sysfs = %d, want 1", n)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, c := range []struct {
		node int
		want string
	}{{7, "none of its CPUs (100000) is one this process may run on"}, {8, `"1-0" is not a range of CPUs`}, {9, "no such file"}, {10, "node 10 has no CPUs"}} {
		undo, err := s.Pin(c.node)
		if err == nil {
			undo()
			t.Errorf("Pin(%d) succeeded on a node with no CPU this process may run on", c.node)
		} else if !strings.Contains(err.Error(), c.want) {
			t.Errorf("Pin(%d): %v, want it to say %q", c.node, err, c.want)
		}
	}
}

// Pin binds the calling OS thread to the node's CPUs (those this process
// may run on) and undo puts back what it had: tried on this machine, with
// a node made of one of the CPUs the thread may run on.
func TestSysNUMAPins(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before, err := getAffinity()
	if err != nil {
		t.Skip("sched_getaffinity:", err)
	}
	var allowed []int
	for c := 0; c < len(before)*64; c++ {
		if before[c/64]&(1<<(c%64)) != 0 {
			allowed = append(allowed, c)
		}
	}
	if len(allowed) < 2 {
		t.Skip("this process may run on one CPU: nothing to narrow")
	}
	last := allowed[len(allowed)-1]
	root := t.TempDir()
	// Node 0: the last allowed CPU and one no machine has.
	writeFiles(t, root, map[string]string{"devices/system/node/node0/cpulist": strconv.Itoa(last) + ",300000"})
	undo, err := sysNUMA{root: root}.Pin(0)
	if err != nil {
		t.Fatal(err)
	}
	during, err := getAffinity()
	if err != nil {
		t.Fatal(err)
	}
	want := make(cpuMask, len(before))
	want[last/64] = 1 << (last % 64)
	if !slices.Equal(during, want) {
		t.Errorf("pinned to node 0 (CPU %d), the thread may run on %v", last, during)
	}
	if err := undo(); err != nil {
		t.Fatal(err)
	}
	after, err := getAffinity()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(after, before) {
		t.Errorf("after undo the thread may run on %v, before %v", after, before)
	}
}

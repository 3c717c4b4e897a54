package hw

import (
	"context"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"gpusim/scenarios"
)

const twoSockets = `
name: two-sockets
hosts: [{name: cpu0, cores: 8, api_overhead: 1 us}, {name: cpu1, cores: 8, api_overhead: 1 us}, {name: cpu2, cores: 8, api_overhead: 1 us}]
gpus:
  - {name: gpu0, model: H100-SXM, host: cpu0}
  - {name: gpu1, model: H100-SXM, host: cpu1}
links:
  - {ends: [gpu0, cpu0], type: pcie5x16}
  - {ends: [gpu1, cpu1], type: pcie5x16}
  - {ends: [cpu0, cpu1], type: upi, count: 4}
  - {ends: [cpu1, cpu2], type: upi, count: 4}
`

// needThreadIDs skips a test off Linux: the fake's NUMA tells OS threads
// apart by their Linux thread ids.
func needThreadIDs(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the fake tells OS threads apart by Linux thread ids")
	}
}

func loadOn(t *testing.T, topo, src string) *scenarios.Scenario {
	t.Helper()
	sc, err := scenarios.Load("test.yaml", []byte(src), scenarios.Options{ReadFile: func(string) ([]byte, error) {
		return []byte(topo), nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// numaNotes is the fake driver, noting the NUMA node of the OS thread that
// allocates each pinned buffer, and of the thread that issues each H2D
// copy and kernel.
type numaNotes struct {
	*Fake
	mu      sync.Mutex
	alloc   map[HostPtr]int
	cur     map[int]Context // per OS thread, its current context
	noCtx   int             // pinned allocations with no context current
	h2d     [][2]int        // {node of the calling thread, the buffer}
	launch  map[int]int
	d2hPage []int // nodes of the calling threads of D2H copies to pageable memory
}

func (d *numaNotes) MemHostAlloc(n uint64) (HostPtr, error) {
	p, err := d.Fake.MemHostAlloc(n)
	d.mu.Lock()
	d.alloc[p] = d.ThreadNode()
	if d.cur[threadID()] == 0 {
		d.noCtx++
	}
	d.mu.Unlock()
	return p, err
}

func (d *numaNotes) SetCurrent(c Context) error {
	d.mu.Lock()
	d.cur[threadID()] = c
	d.mu.Unlock()
	return d.Fake.SetCurrent(c)
}

func (d *numaNotes) MemcpyHtoDAsync(dst DevicePtr, src HostPtr, n uint64, s Stream) error {
	d.mu.Lock()
	d.h2d = append(d.h2d, [2]int{d.ThreadNode(), int(src)})
	d.mu.Unlock()
	return d.Fake.MemcpyHtoDAsync(dst, src, n, s)
}

func (d *numaNotes) Launch(f Function, grid, block, shared uint32, s Stream, args ...Arg) error {
	d.mu.Lock()
	d.launch[d.ThreadNode()]++
	d.mu.Unlock()
	return d.Fake.Launch(f, grid, block, shared, s, args...)
}

// A topology's host stands for the NUMA node of the GPUs it holds, and its
// threads and its memory are placed there. The fake machine's GPU 0 is on
// node 1 and GPU 1 on node 0 (crossed, so that a host's index does not
// give its node): cpu0's thread runs on node 1 and its copies from cpu0
// read memory allocated on node 1; its copy from cpu1's memory reads
// memory allocated on node 0. cpu2 has no GPU and is not used: unplaced.
func TestRunPlacesHostsOnNUMANodes(t *testing.T) {
	needThreadIDs(t)
	sc := loadOn(t, twoSockets, `
name: t
topology: two-sockets.yaml
threads:
  - name: a
    host: cpu0
    ops:
      - copy: {id: local, from: cpu0, to: gpu0, bytes: 1 MB, stream: gpu0/s}
      - copy: {id: remote, from: cpu1, to: gpu0, bytes: 2 MB, stream: gpu0/s}
      - kernel: {id: ka, stream: gpu0/s, duration: 10 us}
      - sync: {stream: gpu0/s}
  - name: b
    host: cpu1
    ops:
      - kernel: {id: kb, stream: gpu1/s, duration: 10 us}
      - copy: {id: down, from: gpu1, to: cpu1, bytes: 1 MB, memory: pageable, stream: gpu1/s}
      - sync: {stream: gpu1/s}
`)
	cfg := testConfig()
	cfg.NUMA = []int{1, 0}
	d := &numaNotes{Fake: NewFake(cfg), alloc: map[HostPtr]int{}, launch: map[int]int{}, cur: map[int]Context{}}
	_, info, err := Run(context.Background(), d, sc.Topology.Machine, sc.Program, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{1, 0, -1}; !reflect.DeepEqual(info.HostNodes, want) {
		t.Errorf("HostNodes = %v, want %v", info.HostNodes, want)
	}
	if len(info.Warnings) != 0 {
		t.Errorf("warnings: %q", info.Warnings)
	}
	// Thread a's copies, as it issued them (warm-up copies run unplaced).
	var fromA []int
	for _, c := range d.h2d {
		if c[0] == 1 {
			fromA = append(fromA, c[1])
		}
		if c[0] == 0 {
			t.Errorf("an H2D copy issued from node 0: thread b issues none")
		}
	}
	if len(fromA) != 2 {
		t.Fatalf("thread a issued %d H2D copies from node 1, want 2 (%v)", len(fromA), d.h2d)
	}
	for i, want := range []int{1, 0} {
		if got := d.alloc[HostPtr(fromA[i])]; got != want {
			t.Errorf("copy %d of thread a reads pinned memory allocated on node %d, want %d (its host's)", i, got, want)
		}
	}
	// Each thread launches its kernel and, before time zero, one to make
	// its first launch (the slow one) untimed.
	if d.launch[1] != 2 || d.launch[0] != 2 {
		t.Errorf("kernels launched per node %v, want two from node 1 (thread a) and two from node 0 (thread b)", d.launch)
	}
	if d.noCtx > 0 {
		t.Errorf("%d pinned allocations with no context current on their thread (cuMemHostAlloc needs one)", d.noCtx)
	}
	if n := d.Pinned(); n != 0 {
		t.Errorf("%d OS threads still pinned after the run", n)
	}
	if live := d.Live(); len(live) != 0 {
		t.Errorf("still allocated after the run: %v", live)
	}
}

// failPin is a NUMA whose Pin fails.
type failPin struct{ *Fake }

func (failPin) Pin(int) (func() error, error) { return nil, os.ErrPermission }

func TestRunNUMAWarnings(t *testing.T) {
	needThreadIDs(t)
	const prog = `
name: t
topology: two-sockets.yaml
threads:
  - name: a
    host: cpu0
    ops:
      - copy: {id: up, from: cpu2, to: gpu0, bytes: 1 MB, stream: gpu0/s}
  - name: b
    host: cpu1
    ops:
      - kernel: {id: kb, stream: gpu1/s, duration: 10 us}
`
	cases := []struct {
		name  string
		numa  []int
		nodes int  // FakeConfig.NUMANodes
		pin   bool // Pin fails
		place []int
		warn  []string
	}{
		{"one node", nil, 0, false, []int{-1, -1, -1}, nil},
		{"both GPUs on one node of two", []int{0, 0}, 2, false, []int{0, 0, -1}, []string{
			"this machine has 2 NUMA nodes and the topology attaches no GPU of this machine to cpu2, so which node it stands for is not known: cpu2's threads and host memory are placed as the OS places them",
			"the topology's hosts cpu0 and cpu1 are both NUMA node 0 of this machine"}},
		{"a GPU's node unknown", []int{1, -1, 0}, 0, false, []int{1, -1, -1}, []string{
			"this machine has 2 NUMA nodes and none of the GPUs the topology attaches to cpu1 says which it is on: cpu1's threads",
			"the topology attaches no GPU of this machine to cpu2"}},
		// Where a thread cannot be bound, its host is reported where it
		// ran: placed by the OS.
		{"pinning refused", []int{0, 1}, 0, true, []int{-1, -1, -1}, []string{
			"binding a thread of cpu0 to NUMA node 0's CPUs: permission denied; their threads and host memory are placed as the OS places them",
			"binding a thread of cpu1 to NUMA node 1's CPUs: permission denied"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := loadOn(t, twoSockets, prog)
			cfg := testConfig()
			cfg.NUMA, cfg.NUMANodes = c.numa, c.nodes
			f := NewFake(cfg)
			opt := Options{}
			if c.pin {
				opt.NUMA = failPin{f}
			}
			_, info, err := Run(context.Background(), f, sc.Topology.Machine, sc.Program, opt)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(info.HostNodes, c.place) {
				t.Errorf("HostNodes = %v, want %v", info.HostNodes, c.place)
			}
			all := strings.Join(info.Warnings, "\n")
			for _, w := range c.warn {
				if !strings.Contains(all, w) {
					t.Errorf("no warning %q in:\n%s", w, all)
				}
			}
			if c.warn == nil && len(info.Warnings) != 0 {
				t.Errorf("warnings on a machine of one node: %q", info.Warnings)
			}
			if n := f.Pinned(); n != 0 {
				t.Errorf("%d OS threads still pinned after the run", n)
			}
		})
	}
}

func TestParseCPUList(t *testing.T) {
	for s, want := range map[string][]int{
		"0-3,8,10-11\n": {0, 1, 2, 3, 8, 10, 11},
		"5":             {5},
		"":              nil,
		"2,0-1,1":       {0, 1, 2},
	} {
		got, err := parseCPUList(s)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("parseCPUList(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"a", "3-1", "1-", "-1", "0-99999999"} {
		if got, err := parseCPUList(s); err == nil {
			t.Errorf("parseCPUList(%q) = %v, want an error", s, got)
		}
	}
}

// oneHostAttr is the fake driver, failing to read GPU 1's PCI bus.
type oneHostAttr struct{ *Fake }

func (d oneHostAttr) Attribute(dev int, a Attr) (int, error) {
	if dev == 1 && a == AttrPCIBus {
		return 0, &CUDAError{Call: "cuDeviceGetAttribute", Code: 1}
	}
	return d.Fake.Attribute(dev, a)
}

// A host whose GPUs are on two nodes goes on the node of most of them
// (ties: the lowest), with a warning that copies to the others cross
// sockets; a GPU whose address cannot be read counts as on no node, with
// a warning, and the run goes on.
func TestRunHostOnSeveralNodes(t *testing.T) {
	needThreadIDs(t)
	const oneSocket = `
name: one-socket
hosts: [{name: cpu0, cores: 8, api_overhead: 1 us}]
gpus:
  - {name: gpu0, model: H100-SXM, host: cpu0}
  - {name: gpu1, model: H100-SXM, host: cpu0}
  - {name: gpu2, model: H100-SXM, host: cpu0}
links:
  - {ends: [gpu0, cpu0], type: pcie5x16}
  - {ends: [gpu1, cpu0], type: pcie5x16}
  - {ends: [gpu2, cpu0], type: pcie5x16}
`
	sc := loadOn(t, oneSocket, "name: t\ntopology: s.yaml\nthreads: [{name: a, host: cpu0, ops: [{kernel: {stream: gpu0/s, duration: 1 us}}]}]\n")
	for _, c := range []struct {
		name  string
		numa  []int
		drv   func(*Fake) Driver
		place int
		warn  string
	}{
		{"two to one", []int{1, 0, 1}, nil, 1, "the GPUs the topology attaches to cpu0 are on several NUMA nodes of this machine (1 on node 0, 2 on node 1): cpu0's threads and host memory are on node 1"},
		{"a tie", []int{1, 0, -1}, nil, 0, "(1 on node 0, 1 on node 1): cpu0's threads and host memory are on node 0"},
		{"an address unread", []int{1, 0, 0}, func(f *Fake) Driver { return oneHostAttr{f} }, 0,
			"reading which NUMA node each GPU is on: device 1: cuDeviceGetAttribute"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.Devices, cfg.NUMA = 3, c.numa
			f := NewFake(cfg)
			var drv Driver = f
			if c.drv != nil {
				drv = c.drv(f)
			}
			_, info, err := Run(context.Background(), drv, sc.Topology.Machine, sc.Program, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if info.HostNodes[0] != c.place {
				t.Errorf("cpu0 on node %d, want %d", info.HostNodes[0], c.place)
			}
			if all := strings.Join(info.Warnings, "\n"); !strings.Contains(all, c.warn) {
				t.Errorf("no warning %q in:\n%s", c.warn, all)
			}
		})
	}
}

// Host memory is one set a NUMA node: on a machine of one node, copies
// from two hosts share one pinned buffer, as before hosts were placed; on
// two nodes, each node has its own.
func TestRunHostMemoryPerNode(t *testing.T) {
	needThreadIDs(t)
	sc := loadOn(t, twoSockets, `
name: t
topology: two-sockets.yaml
threads:
  - name: a
    host: cpu0
    ops:
      - copy: {from: cpu0, to: gpu0, bytes: 1 MB, stream: gpu0/s}
      - copy: {from: cpu1, to: gpu0, bytes: 2 MB, stream: gpu0/s}
`)
	for _, c := range []struct {
		numa []int
		bufs int
	}{{nil, 1}, {[]int{0, 1}, 2}, {[]int{0, 0}, 1}} {
		cfg := testConfig()
		cfg.NUMA, cfg.NUMANodes = c.numa, 2
		if c.numa == nil {
			cfg.NUMANodes = 0
		}
		f := NewFake(cfg)
		if _, _, err := Run(context.Background(), f, sc.Topology.Machine, sc.Program, Options{}); err != nil {
			t.Fatal(err)
		}
		if n := f.CallCounts()["cuMemHostAlloc"]; n != c.bufs {
			t.Errorf("GPUs on nodes %v: %d pinned buffers, want %d (one a node)", c.numa, n, c.bufs)
		}
	}
}

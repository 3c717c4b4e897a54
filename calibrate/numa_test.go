//go:build linux

package calibrate

import (
	"context"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"gpusim/hw"
)

// numaNotes is the fake driver, noting on which NUMA node each pinned
// buffer was allocated and, for each copy between host and device, the
// node of its pinned buffer, the node of the thread that issued it, and
// the GPU whose context was current on that thread.
type numaNotes struct {
	*hw.Fake
	mu     sync.Mutex
	allocs []alloc
	cur    map[int]hw.Context // OS thread -> its current context
	copies []hostCopy
}

type alloc struct {
	at    hw.HostPtr
	n     uint64
	node  int
	noCtx bool // no context was current on the allocating thread
}

type hostCopy struct {
	gpu, bufNode, threadNode int
	pageable                 bool
}

func (d *numaNotes) MemHostAlloc(n uint64) (hw.HostPtr, error) {
	p, err := d.Fake.MemHostAlloc(n)
	d.mu.Lock()
	d.allocs = append(d.allocs, alloc{p, n, d.ThreadNode(), d.cur[syscall.Gettid()] == 0})
	d.mu.Unlock()
	return p, err
}

func (d *numaNotes) SetCurrent(c hw.Context) error {
	d.mu.Lock()
	d.cur[syscall.Gettid()] = c
	d.mu.Unlock()
	return d.Fake.SetCurrent(c)
}

func (d *numaNotes) note(p hw.HostPtr) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := hostCopy{gpu: int(d.cur[syscall.Gettid()]) - 1, bufNode: -2, threadNode: d.ThreadNode(), pageable: true}
	for _, a := range d.allocs {
		if p >= a.at && p < a.at+hw.HostPtr(a.n) {
			c.bufNode, c.pageable = a.node, false
		}
	}
	d.copies = append(d.copies, c)
}

func (d *numaNotes) MemcpyHtoDAsync(dst hw.DevicePtr, src hw.HostPtr, n uint64, s hw.Stream) error {
	d.note(src)
	return d.Fake.MemcpyHtoDAsync(dst, src, n, s)
}

func (d *numaNotes) MemcpyDtoHAsync(dst hw.HostPtr, src hw.DevicePtr, n uint64, s hw.Stream) error {
	d.note(dst)
	return d.Fake.MemcpyDtoHAsync(dst, src, n, s)
}

// On a machine of two NUMA nodes, each GPU's host copies read and write
// pinned memory allocated on its own node, and those issued while a GPU
// is measured alone come from a thread on its node: the link toward its
// host is measured, not the inter-socket link as well. The fake's GPU 0 is
// on node 1 and GPU 1 on node 0 (crossed, so GPU index is no clue).
func TestRunMeasuresEachGPUFromItsNode(t *testing.T) {
	cfg := fakeConfig()
	cfg.Devices, cfg.NUMA = 2, []int{1, 0}
	d := &numaNotes{Fake: hw.NewFake(cfg), cur: map[int]hw.Context{}}
	r, err := Run(context.Background(), d, Options{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Nodes, []int{1, 0}) {
		t.Errorf("Nodes = %v, want [1 0]", r.Nodes)
	}
	if len(r.Placement) != 0 {
		t.Errorf("placement notes: %q", r.Placement)
	}
	nodes := map[int]bool{}
	for _, a := range d.allocs {
		nodes[a.node] = true
	}
	if len(d.allocs) != 4 || !nodes[0] || !nodes[1] {
		t.Errorf("pinned buffers allocated %+v; want two on each node", d.allocs)
	}
	for _, a := range d.allocs {
		if a.noCtx {
			t.Errorf("pinned memory allocated on node %d with no context current on the thread (cuMemHostAlloc needs one)", a.node)
		}
	}
	want := []int{1, 0}
	fromNode := map[[2]int]int{} // {gpu, thread node} -> copies
	for _, c := range d.copies {
		if c.gpu < 0 || c.gpu > 1 {
			t.Fatalf("a host copy with no GPU's context current: %+v", c)
		}
		if !c.pageable && c.bufNode != want[c.gpu] {
			t.Errorf("gpu%d copied pinned memory of node %d, want %d", c.gpu, c.bufNode, want[c.gpu])
		}
		if c.threadNode >= 0 && c.threadNode != want[c.gpu] {
			t.Errorf("gpu%d's copy issued from a thread on node %d, want %d", c.gpu, c.threadNode, want[c.gpu])
		}
		fromNode[[2]int{c.gpu, c.threadNode}]++
	}
	for g, n := range want {
		// Its pinned and pageable paths, sizes and repeats: many.
		if fromNode[[2]int{g, n}] < 20 {
			t.Errorf("gpu%d: %d host copies issued from its node %d; want its measurements there (%v)", g, fromNode[[2]int{g, n}], n, fromNode)
		}
	}
	if d.Pinned() != 0 {
		t.Errorf("%d OS threads still pinned", d.Pinned())
	}
	if live := d.Live(); len(live) > 0 {
		t.Errorf("not freed: %v", live)
	}
	out, err := r.Apply("two.yaml", []byte(twoSockets))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "Each GPU's host copies from memory on its own NUMA node, issued from its CPUs: gpu0 node 1, gpu1 node 0.") {
		t.Errorf("the calibrated topology does not say where copies were measured from:\n%s", out)
	}
}

const twoSockets = `name: two
hosts: [{name: cpu0, cores: 16}, {name: cpu1, cores: 16}]
gpus: [{name: gpu0, model: H100-SXM, host: cpu1}, {name: gpu1, model: H100-SXM, host: cpu0}]
links:
  - {ends: [gpu0, cpu1], type: pcie5x16}
  - {ends: [gpu1, cpu0], type: pcie5x16}
  - {ends: [cpu0, cpu1], type: upi, count: 4}
`

// failPin is a NUMA that cannot bind threads.
type failPin struct{ *hw.Fake }

func (failPin) Pin(int) (func() error, error) { return nil, syscall.EPERM }

// Where binding fails, calibration goes on and says so.
func TestRunPlacementRefused(t *testing.T) {
	cfg := fakeConfig()
	cfg.Devices, cfg.NUMA = 2, []int{1, 0}
	f := hw.NewFake(cfg)
	r, err := Run(context.Background(), f, Options{Quick: true, NUMA: failPin{f}})
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(r.Warnings(), "\n")
	for _, want := range []string{
		"gpu0's host copies: binding a thread to NUMA node 1's CPUs: operation not permitted; placed as the OS places them",
		"gpu1's host copies: binding a thread to NUMA node 0's CPUs: operation not permitted",
	} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %q:\n%s", want, w)
		}
	}
	// Measured from no particular node, and the YAML does not say it was.
	if !slices.Equal(r.Nodes, []int{-1, -1}) {
		t.Errorf("Nodes = %v, want [-1 -1]: no thread was bound", r.Nodes)
	}
	out, err := r.Apply("two.yaml", []byte(twoSockets))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "from memory on its own NUMA node") {
		t.Errorf("the calibrated topology claims a placement that failed:\n%s", out)
	}
}

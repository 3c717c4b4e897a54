package hw

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"gpusim/sim"
)

// NUMA places host threads and host memory on the machine's NUMA nodes: a
// topology's host is a socket (a NUMA node), and a copy from cpu1's memory
// to a GPU beside cpu0 crosses the inter-socket link in the model, so the
// backend puts cpu1's buffers and threads on the node where the machine's
// GPUs that the topology attaches to cpu1 are.
type NUMA interface {
	// Nodes is how many NUMA nodes have CPUs (1 where the machine does not
	// say).
	Nodes() int
	// DeviceNode is the NUMA node of the PCI device at
	// domain:bus:device.0, or -1 where the machine does not say.
	DeviceNode(domain, bus, device int) int
	// Pin makes the calling OS thread run on node's CPUs until undo is
	// called: the memory it touches first, and the pinned memory the
	// driver allocates for it, come from that node (Linux's default
	// policy allocates on the node of the CPU that asks).
	Pin(node int) (undo func() error, err error)
}

// placeHosts finds, for each of the topology's hosts that the program's
// threads run on or its copies read or write, the NUMA node of this
// machine it stands for: the node most of the GPUs the topology attaches
// to it are on (ties to the lowest). Hosts it cannot place, and every host
// on a machine of one node, stay -1: placed as the OS places them. nDev is
// how many devices the machine has.
func (b *backend) placeHosts(nDev int) error {
	m, p := b.m, b.p
	b.hostNode = make([]int, len(m.Hosts))
	for h := range b.hostNode {
		b.hostNode[h] = -1
	}
	b.info.HostNodes = b.hostNode
	if b.numa == nil || b.numa.Nodes() < 2 {
		return nil
	}
	used := hostsUsed(m, p)
	nodes, err := DeviceNodes(b.drv, b.numa, min(nDev, len(m.GPUs)))
	if err != nil {
		return err
	}
	votes := make([]map[int]int, len(m.Hosts))
	for g, n := range nodes {
		if n < 0 {
			continue
		}
		h := m.GPUs[g].Host
		if votes[h] == nil {
			votes[h] = map[int]int{}
		}
		votes[h][n]++
	}
	onNode := map[int]int{} // node -> first host placed on it
	for h, u := range used {
		if !u {
			continue
		}
		best := -1
		for n, c := range votes[h] {
			if best < 0 || c > votes[h][best] || c == votes[h][best] && n < best {
				best = n
			}
		}
		if best < 0 {
			b.warn("this machine has %d NUMA nodes and none of the GPUs the topology attaches to %s says which it is on: %s's threads and host memory are placed as the OS places them", b.numa.Nodes(), m.Hosts[h].Name, m.Hosts[h].Name)
			continue
		}
		b.hostNode[h] = best
		if o, ok := onNode[best]; ok {
			b.warn("the topology's hosts %s and %s are both NUMA node %d of this machine (where their GPUs are): copies between one's memory and the other's GPUs do not cross sockets here as the model has them", m.Hosts[o].Name, m.Hosts[h].Name, best)
		} else {
			onNode[best] = h
		}
	}
	return nil
}

// DeviceNodes is the NUMA node of each of the first n devices, from its
// PCI address: all -1 on a machine of one node, and where the machine
// does not say.
func DeviceNodes(drv Driver, numa NUMA, n int) ([]int, error) {
	nodes := make([]int, n)
	for g := range nodes {
		nodes[g] = -1
	}
	if numa == nil || numa.Nodes() < 2 {
		return nodes, nil
	}
	for g := range nodes {
		var at [3]int
		for i, a := range []Attr{AttrPCIDomain, AttrPCIBus, AttrPCIDevice} {
			v, err := drv.Attribute(g, a)
			if err != nil {
				return nil, err
			}
			at[i] = v
		}
		nodes[g] = numa.DeviceNode(at[0], at[1], at[2])
	}
	return nodes, nil
}

// hostsUsed says which of m's hosts p uses: those its threads run on and
// the host ends of its copies.
func hostsUsed(m *sim.Machine, p *sim.Program) []bool {
	used := make([]bool, len(m.Hosts))
	for ti := range p.Threads {
		used[p.Threads[ti].Host] = true
		for oi := range p.Threads[ti].Ops {
			op := &p.Threads[ti].Ops[oi]
			if op.Kind != sim.OpCopy {
				continue
			}
			for _, end := range []int{op.Src, op.Dst} {
				if nd := m.Nodes[end]; nd.Kind == sim.NodeHost {
					used[nd.Index] = true
				}
			}
		}
	}
	return used
}

// PinThread binds the calling goroutine's OS thread (the goroutine must be
// locked to it) to node's CPUs. undo puts the thread back; if that fails,
// undo locks the goroutine once more, so that its OS thread ends with it
// rather than go back to Go's pool bound to one node's CPUs.
func PinThread(n NUMA, node int) (undo func(), err error) {
	u, err := n.Pin(node)
	if err != nil {
		return nil, err
	}
	return func() {
		if u() != nil {
			runtime.LockOSThread()
		}
	}, nil
}

// OnNode runs f on a new OS thread bound to node's CPUs and returns f's
// error; pinErr says why the thread could not be bound (f ran all the
// same). With node < 0, f runs on the caller's thread, unbound.
func OnNode(n NUMA, node int, f func() error) (pinErr, err error) {
	if node < 0 {
		return nil, f()
	}
	type out struct{ pinErr, err error }
	c := make(chan out, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		undo, perr := PinThread(n, node)
		if perr == nil {
			defer undo()
		}
		c <- out{perr, f()}
	}()
	o := <-c
	return o.pinErr, o.err
}

// pin binds the calling goroutine, locked to its OS thread, to host h's
// NUMA node, where it has one, warning where it cannot.
func (b *backend) pin(h int) (undo func()) {
	if b.hostNode == nil || b.hostNode[h] < 0 {
		return func() {}
	}
	undo, err := PinThread(b.numa, b.hostNode[h])
	if err != nil {
		b.pinFailed(h, err)
		return func() {}
	}
	return undo
}

func (b *backend) pinFailed(h int, err error) {
	b.warn("%s: running on the CPUs of NUMA node %d: %v; its threads and host memory are placed as the OS places them", b.m.Hosts[h].Name, b.hostNode[h], err)
}

// onHost runs f on an OS thread on host h's NUMA node (where it has one)
// with GPU g's context current: the driver allocates pinned memory within
// a context.
func (b *backend) onHost(h, g int, f func() error) error {
	if b.hostNode == nil || b.hostNode[h] < 0 {
		return f()
	}
	pinErr, err := OnNode(b.numa, b.hostNode[h], func() error {
		defer b.drv.SetCurrent(0)
		if err := b.setCurrent(g); err != nil {
			return err
		}
		return f()
	})
	if pinErr != nil {
		b.pinFailed(h, pinErr)
	}
	return err
}

// parseCPUList reads a Linux CPU list ("0-3,8,10-11").
func parseCPUList(s string) ([]int, error) {
	var cpus []int
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, rng := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("CPU list %q: %q is not a CPU number", s, lo)
		}
		c := a
		if rng {
			if c, err = strconv.Atoi(hi); err != nil || c < a {
				return nil, fmt.Errorf("CPU list %q: %q is not a range of CPUs", s, part)
			}
		}
		if c-a > 1<<16 {
			return nil, fmt.Errorf("CPU list %q: range %q is too large", s, part)
		}
		for i := a; i <= c; i++ {
			cpus = append(cpus, i)
		}
	}
	slices.Sort(cpus)
	return slices.Compact(cpus), nil
}

package hw

import (
	"fmt"
	"maps"
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

// NUMAFor is n, or where n is nil the driver's own NUMA if it has one (the
// fake driver does), else SystemNUMA.
func NUMAFor(drv Driver, n NUMA) NUMA {
	if n != nil {
		return n
	}
	if dn, ok := drv.(NUMA); ok {
		return dn
	}
	return SystemNUMA()
}

// placeHosts finds, for each of the topology's hosts that the program's
// threads run on or its copies read or write, the NUMA node of this
// machine it stands for: the node most of the GPUs the topology attaches
// to it are on (ties to the lowest). Hosts it cannot place, and every host
// on a machine of one node, stay -1: placed as the OS places them. nDev is
// how many devices the machine has.
func (b *backend) placeHosts(nDev int) {
	m, p := b.m, b.p
	b.hostNode = make([]int, len(m.Hosts))
	for h := range b.hostNode {
		b.hostNode[h] = -1
	}
	b.info.HostNodes = slices.Clone(b.hostNode)
	if b.numa == nil || b.numa.Nodes() < 2 {
		return
	}
	used := hostsUsed(m, p)
	nodes, problem := DeviceNodes(b.drv, b.numa, min(nDev, len(m.GPUs)))
	if problem != nil {
		b.warn("reading which NUMA node each GPU is on: %v; the GPUs it could not read count as on no node", problem)
	}
	votes := make([]map[int]int, len(m.Hosts))
	attached := make([]int, len(m.Hosts))
	for g, n := range nodes {
		h := m.GPUs[g].Host
		attached[h]++
		if n < 0 {
			continue
		}
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
		name := m.Hosts[h].Name
		best := -1
		for _, n := range slices.Sorted(maps.Keys(votes[h])) {
			if best < 0 || votes[h][n] > votes[h][best] {
				best = n
			}
		}
		switch {
		case best < 0 && attached[h] == 0:
			b.warn("this machine has %d NUMA nodes and the topology attaches no GPU of this machine to %s, so which node it stands for is not known: %s's threads and host memory are placed as the OS places them", b.numa.Nodes(), name, name)
			continue
		case best < 0:
			b.warn("this machine has %d NUMA nodes and none of the GPUs the topology attaches to %s says which it is on: %s's threads and host memory are placed as the OS places them", b.numa.Nodes(), name, name)
			continue
		case len(votes[h]) > 1:
			var on []string
			for _, n := range slices.Sorted(maps.Keys(votes[h])) {
				on = append(on, fmt.Sprintf("%d on node %d", votes[h][n], n))
			}
			b.warn("the GPUs the topology attaches to %s are on several NUMA nodes of this machine (%s): %s's threads and host memory are on node %d, and copies between it and the GPUs of the other nodes cross sockets here as the model does not have them", name, strings.Join(on, ", "), name, best)
		}
		b.hostNode[h], b.info.HostNodes[h] = best, best
		if o, ok := onNode[best]; ok {
			b.warn("the topology's hosts %s and %s are both NUMA node %d of this machine (where their GPUs are): copies between one's memory and the other's GPUs do not cross sockets here as the model has them", m.Hosts[o].Name, name, best)
		} else {
			onNode[best] = h
		}
	}
}

// DeviceNodes is the NUMA node of each of the first n devices, from its
// PCI address: all -1 on a machine of one node, and where the machine
// does not say. A device whose address cannot be read is -1 too, and
// problem says why (the first such).
func DeviceNodes(drv Driver, numa NUMA, n int) (nodes []int, problem error) {
	nodes = make([]int, n)
	for g := range nodes {
		nodes[g] = -1
	}
	if numa == nil || numa.Nodes() < 2 {
		return nodes, nil
	}
	for g := range nodes {
		var at [3]int
		var err error
		for i, a := range []Attr{AttrPCIDomain, AttrPCIBus, AttrPCIDevice} {
			if at[i], err = drv.Attribute(g, a); err != nil {
				break
			}
		}
		if err != nil {
			if problem == nil {
				problem = fmt.Errorf("device %d: %w", g, err)
			}
			continue
		}
		nodes[g] = numa.DeviceNode(at[0], at[1], at[2])
	}
	return nodes, problem
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
// undo locks the goroutine once more, so that its OS thread ends with the
// goroutine rather than go back to Go's pool bound to one node's CPUs, and
// returns why (the thread is still bound: bind it no more).
func PinThread(n NUMA, node int) (undo func() error, err error) {
	u, err := n.Pin(node)
	if err != nil {
		return nil, err
	}
	return func() error {
		err := u()
		if err != nil {
			runtime.LockOSThread()
		}
		return err
	}, nil
}

// OnNode runs f on a goroutine locked to an OS thread of its own and bound
// to node's CPUs, and returns f's error; pinErr says why the thread could
// not be bound (f ran all the same). With node < 0, f runs on the
// caller's thread, unbound.
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
			defer undo() // on failure this goroutine's thread ends with it
		}
		c <- out{perr, f()}
	}()
	o := <-c
	return o.pinErr, o.err
}

// pin binds the calling goroutine, locked to its OS thread, to host h's
// NUMA node, where it has one, warning where it cannot. The goroutine must
// end after undo (a failed undo leaves it locked, to end its thread).
func (b *backend) pin(h int) (undo func()) {
	node := b.hostNode[h]
	if node < 0 {
		return func() {}
	}
	u, err := PinThread(b.numa, node)
	if err != nil {
		b.pinFailed(node, err)
		return func() {}
	}
	return func() { u() }
}

// pinFailed warns that a thread could not be bound to node, and takes the
// hosts on it out of Info.HostNodes: what is reported is where they ran.
func (b *backend) pinFailed(node int, err error) {
	var names []string
	b.mu.Lock()
	for h, n := range b.hostNode {
		if n == node {
			names = append(names, b.m.Hosts[h].Name)
			b.info.HostNodes[h] = -1
		}
	}
	b.mu.Unlock()
	b.warn("binding a thread of %s to NUMA node %d's CPUs: %v; their threads and host memory are placed as the OS places them", strings.Join(names, " and "), node, err)
}

// onNode runs f on an OS thread on NUMA node (where node >= 0) with GPU
// g's context current: the driver allocates pinned memory within a
// context.
func (b *backend) onNode(node, g int, f func() error) error {
	if node < 0 {
		return f()
	}
	pinErr, err := OnNode(b.numa, node, func() error {
		defer b.drv.SetCurrent(0)
		if err := b.setCurrent(g); err != nil {
			return err
		}
		return f()
	})
	if pinErr != nil {
		b.pinFailed(node, pinErr)
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

package sim

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// NodeKind says what a node of the machine graph is.
type NodeKind uint8

// Node kinds.
const (
	NodeHost   NodeKind = iota // a CPU socket with its memory
	NodeGPU                    // a GPU; traffic ends at GPUs and never passes through them
	NodeSwitch                 // a PCIe switch or an NVSwitch
)

func (k NodeKind) String() string {
	switch k {
	case NodeHost:
		return "host"
	case NodeGPU:
		return "gpu"
	case NodeSwitch:
		return "switch"
	}
	return fmt.Sprintf("NodeKind(%d)", uint8(k))
}

// LinkKind is the family of a link; routing prefers the NVLink fabric.
type LinkKind uint8

// Link kinds.
const (
	LinkPCIe   LinkKind = iota // PCIe between a GPU, a switch and a root complex
	LinkNVLink                 // NVLink, directly or to an NVSwitch
	LinkSocket                 // the inter-socket link (UPI, Infinity Fabric)
	LinkC2C                    // NVLink-C2C between a Grace CPU and its GPU
	LinkOther                  // anything else
)

func (k LinkKind) String() string {
	switch k {
	case LinkPCIe:
		return "pcie"
	case LinkNVLink:
		return "nvlink"
	case LinkSocket:
		return "socket"
	case LinkC2C:
		return "c2c"
	case LinkOther:
		return "other"
	}
	return fmt.Sprintf("LinkKind(%d)", uint8(k))
}

// Node is a vertex of the machine graph.
type Node struct {
	Name  string
	Kind  NodeKind
	Index int // index into Machine.Hosts, GPUs or Switches, by Kind
	// P2P says whether peer-to-peer traffic may pass through this node
	// (false on a switch or root complex that does not forward P2P).
	P2P bool
}

// Host is a CPU socket and its memory.
type Host struct {
	Name string
	Node int // index into Machine.Nodes
	// Cores is the number of cores that host threads share; zero means every
	// thread has a core of its own.
	Cores int
	// APIOverhead is the host time each CUDA-like call costs its thread.
	APIOverhead Time
	// GraphLaunch is the host time of launching a CUDA graph, whatever it holds.
	GraphLaunch Time
	// SyncLatency is the time from the completion of the GPU work a
	// synchronize waits for to the host seeing it: a sync returns at the
	// later of its call's end (APIOverhead) and its targets' completion plus
	// SyncLatency (a target that completed longer ago than that is seen at
	// once).
	SyncLatency Time
	// TimingOverhead is host time added to each kernel, copy, record and
	// wait call by a run that times every op, as gpusim's hw backend does
	// with an event record after each. Topologies leave it zero (it is no
	// cost of the user's program); replay sets it to predict the backend's
	// run.
	TimingOverhead Time
	// MemcpyBandwidth is one thread's memcpy rate, bytes/s, used when staging
	// pageable copies through a pinned bounce buffer.
	MemcpyBandwidth float64
	// PageableH2D and PageableD2H, when not zero, replace MemcpyBandwidth as
	// the staging rate of pageable copies to and from a GPU, bytes/s: the
	// driver's staging is not symmetric (on an H200 host, 8 GB/s to the GPU
	// and 15 GB/s back; calibration measures both).
	PageableH2D, PageableD2H float64
	// MemoryBandwidth is the socket's memory bandwidth, bytes/s, shared by every
	// DMA and memcpy that reads or writes this host's memory.
	MemoryBandwidth float64
	// StagingChunk is the size in bytes of each chunk of a staged copy (pageable
	// copies, and GPU-to-GPU copies without P2P); StagingBuffers is how many
	// chunks may be in flight at once.
	StagingChunk   int64
	StagingBuffers int
	// StagingSetup is the host time a GPU-to-GPU copy call costs beyond
	// APIOverhead when the driver stages the copy through host memory (no
	// peer access): the thread pays it in the call, on its own host.
	StagingSetup Time
	// StagingHandoff is the driver's fixed cost of each chunk's second DMA
	// in a GPU-to-GPU copy staged through this host, with the GPU's copy
	// overhead and the route's latency: paid once the chunk has arrived in
	// the staging buffer and the chunk before it has left, before its bytes
	// flow (in series with the second DMAs, not overlapping them).
	StagingHandoff Time
}

// GPU is one device.
type GPU struct {
	Name  string
	Node  int    // index into Machine.Nodes
	Host  int    // index into Machine.Hosts: the socket it is attached to (its NUMA affinity)
	Model string // the preset it was built from, for display only
	// CopyEngines is the number of DMA engines. A copy waits for one; with
	// two or more, each direction keeps one (see gpuState.mayTake), so a
	// copy may wait while an engine is free for the other direction.
	CopyEngines int
	// CopyOverhead is the fixed time a copy engine spends on each copy (or chunk)
	// before bytes move.
	CopyOverhead Time
	// MemoryBandwidth is the device memory bandwidth available to device-local
	// copies, bytes/s; such a copy reads and writes each byte.
	MemoryBandwidth float64
}

// Switch is a PCIe switch or an NVSwitch.
type Switch struct {
	Name string
	Node int    // index into Machine.Nodes
	Kind string // "pcie" or "nvswitch", for display
	// NVLS says whether the switch reduces in the network (NVLink SHARP, on
	// third-generation NVSwitch and later).
	NVLS bool
}

// Link is a full-duplex link: each direction has Bandwidth of its own.
type Link struct {
	Name      string
	A, B      int // node indices; direction 0 is A to B, direction 1 is B to A
	Kind      LinkKind
	Bandwidth float64 // bytes/s in each direction, as copy-engine transfers see it
	// SMBandwidth is what kernel-driven transfers (collectives, SM copies)
	// reach in each direction, bytes/s; zero means Bandwidth.
	SMBandwidth float64
	// Duplex is what both directions carry together at most, bytes/s as
	// copy-engine transfers see it (kernel-driven ones count with the same
	// factor as on a direction); zero: no joint limit, each direction
	// carries Bandwidth whatever the other does. A PCIe link carrying H2D
	// and D2H at once falls short of twice one direction (gpusim calibrate
	// measures it).
	Duplex  float64
	Latency Time
	// P2P says whether peer-to-peer traffic may cross this link (false on an
	// inter-socket link that does not carry P2P).
	P2P bool
}

// Machine is a topology resolved to numbers: the graph of hosts, GPUs, switches
// and links. Build it, then call Validate.
type Machine struct {
	Name     string
	Nodes    []Node
	Hosts    []Host
	GPUs     []GPU
	Switches []Switch
	Links    []Link

	adj [][]int // node -> links at it, in link order (see adjacency)
}

// Hop is one link of a route, in a direction.
type Hop struct {
	Link    int
	Reverse bool // true when the route crosses the link from B to A
}

// Route is a path through the machine graph.
type Route struct {
	Hops []Hop
}

// Latency returns the sum of the route's link latencies (MaxTime if it
// would overflow).
func (r Route) Latency(m *Machine) Time {
	var t Time
	for _, h := range r.Hops {
		t = satAdd(t, m.Links[h.Link].Latency)
	}
	return t
}

// satAdd adds two non-negative times, saturating at MaxTime.
func satAdd(a, b Time) Time {
	if a > MaxTime-b {
		return MaxTime
	}
	return a + b
}

// Format writes the route as node names: "gpu0 -> sw0 -> cpu0".
func (m *Machine) FormatRoute(from int, r Route) string {
	var b strings.Builder
	b.WriteString(m.Nodes[from].Name)
	at := from
	for _, h := range r.Hops {
		l := m.Links[h.Link]
		at = l.B
		if h.Reverse {
			at = l.A
		}
		b.WriteString(" -> ")
		b.WriteString(m.Nodes[at].Name)
	}
	return b.String()
}

// AddNode appends a node and returns its index.
func (m *Machine) addNode(name string, kind NodeKind, index int, p2p bool) int {
	m.Nodes = append(m.Nodes, Node{Name: name, Kind: kind, Index: index, P2P: p2p})
	m.adj = append(m.adj, nil)
	return len(m.Nodes) - 1
}

// AddHost appends a host and its node; h.Node is set. It returns the host index.
func (m *Machine) AddHost(h Host, p2p bool) int {
	h.Node = m.addNode(h.Name, NodeHost, len(m.Hosts), p2p)
	m.Hosts = append(m.Hosts, h)
	return len(m.Hosts) - 1
}

// AddGPU appends a GPU and its node; g.Node is set. It returns the GPU index.
func (m *Machine) AddGPU(g GPU) int {
	g.Node = m.addNode(g.Name, NodeGPU, len(m.GPUs), true)
	m.GPUs = append(m.GPUs, g)
	return len(m.GPUs) - 1
}

// AddSwitch appends a switch and its node; s.Node is set. It returns the switch index.
func (m *Machine) AddSwitch(s Switch, p2p bool) int {
	s.Node = m.addNode(s.Name, NodeSwitch, len(m.Switches), p2p)
	m.Switches = append(m.Switches, s)
	return len(m.Switches) - 1
}

// AddLink appends a link and returns its index. An empty name is replaced by
// "link:A-B" (with a #n suffix when the pair repeats).
func (m *Machine) AddLink(l Link) int {
	if l.Name == "" {
		base := "link:" + m.Nodes[l.A].Name + "-" + m.Nodes[l.B].Name
		l.Name = base
		for n := 2; m.linkNamed(l.Name); n++ {
			l.Name = fmt.Sprintf("%s#%d", base, n)
		}
	}
	m.Links = append(m.Links, l)
	if len(m.adj) == len(m.Nodes) && l.A >= 0 && l.A < len(m.adj) && l.B >= 0 && l.B < len(m.adj) {
		m.adj[l.A] = append(m.adj[l.A], len(m.Links)-1)
		m.adj[l.B] = append(m.adj[l.B], len(m.Links)-1)
	}
	return len(m.Links) - 1
}

func (m *Machine) linkNamed(name string) bool {
	for _, l := range m.Links {
		if l.Name == name {
			return true
		}
	}
	return false
}

// NodeIndex returns the index of the node with that name, or -1.
func (m *Machine) NodeIndex(name string) int {
	for i, n := range m.Nodes {
		if n.Name == name {
			return i
		}
	}
	return -1
}

// Validate checks the invariants the engine relies on and reports every problem.
func (m *Machine) Validate() error {
	var errs []string
	add := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	seen := map[string]bool{}
	for _, n := range m.Nodes {
		if n.Name == "" {
			add("a %s has no name", n.Kind)
		} else if seen[n.Name] {
			add("duplicate name %q", n.Name)
		}
		seen[n.Name] = true
	}
	for _, h := range m.Hosts {
		if h.Cores < 0 {
			add("host %s: cores %d is negative", h.Name, h.Cores)
		}
		if h.TimingOverhead < 0 {
			add("host %s: timing overhead is negative", h.Name)
		}
		if h.APIOverhead < 0 || h.StagingSetup < 0 || h.StagingHandoff < 0 || h.GraphLaunch < 0 || h.SyncLatency < 0 {
			add("host %s: api_overhead, graph_launch, sync_latency, staging_setup and staging_handoff must not be negative", h.Name)
		}
		if !(h.MemcpyBandwidth >= 1 && h.MemcpyBandwidth <= 1e18) || !(h.MemoryBandwidth >= 1 && h.MemoryBandwidth <= 1e18) {
			add("host %s: memcpy and memory bandwidths must be from 1 B/s to 1 EB/s", h.Name)
		}
		for _, x := range []float64{h.PageableH2D, h.PageableD2H} {
			if x != 0 && !(x >= 1 && x <= 1e18) {
				add("host %s: pageable staging bandwidths must be zero (use memcpy_bandwidth) or from 1 B/s to 1 EB/s", h.Name)
			}
		}
		if h.StagingChunk <= 0 || h.StagingBuffers <= 0 {
			add("host %s: staging chunk and buffer count must be positive", h.Name)
		}
	}
	for _, g := range m.GPUs {
		if g.Host < 0 || g.Host >= len(m.Hosts) {
			add("gpu %s: host index %d out of range", g.Name, g.Host)
		}
		if g.CopyEngines <= 0 {
			add("gpu %s: needs at least one copy engine", g.Name)
		}
		if !(g.MemoryBandwidth >= 1 && g.MemoryBandwidth <= 1e18) {
			add("gpu %s: memory bandwidth must be from 1 B/s to 1 EB/s", g.Name)
		}
		if g.CopyOverhead < 0 {
			add("gpu %s: copy overhead is negative", g.Name)
		}
	}
	for _, l := range m.Links {
		if l.A < 0 || l.A >= len(m.Nodes) || l.B < 0 || l.B >= len(m.Nodes) {
			add("%s: end out of range", l.Name)
			continue
		}
		if l.A == l.B {
			add("%s: both ends are %s", l.Name, m.Nodes[l.A].Name)
		}
		if !(l.Bandwidth >= 1 && l.Bandwidth <= 1e18) {
			add("%s: bandwidth %g B/s must be from 1 B/s to 1 EB/s", l.Name, l.Bandwidth)
		}
		if l.SMBandwidth != 0 && !(l.SMBandwidth >= 1 && l.SMBandwidth <= 1e18) {
			add("%s: SM bandwidth %g B/s must be from 1 B/s to 1 EB/s", l.Name, l.SMBandwidth)
		}
		if l.Duplex != 0 && !(l.Duplex >= l.Bandwidth && l.Duplex <= 2*l.Bandwidth) {
			add("%s: duplex bandwidth %g B/s must be from the bandwidth of one direction (%g) to twice it", l.Name, l.Duplex, l.Bandwidth)
		}
		if l.Latency < 0 {
			add("%s: latency is negative", l.Name)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("machine %s: %s", m.Name, strings.Join(errs, "; "))
	}
	return nil
}

// adjacency lists the links at each node, in link order. It is kept up to
// date by the Add methods, so that a built Machine is only ever read and
// runs may share it.
func (m *Machine) adjacency() [][]int {
	if len(m.adj) != len(m.Nodes) {
		// A Machine assembled by hand rather than through the Add methods.
		adj := make([][]int, len(m.Nodes))
		for i, l := range m.Links {
			adj[l.A] = append(adj[l.A], i)
			adj[l.B] = append(adj[l.B], i)
		}
		return adj
	}
	return m.adj
}

// Route returns the path from node a to node b: the fewest hops, never through
// a GPU, preferring a path made only of NVLink (and NVLink-C2C) links when one
// exists, which never passes through a CPU either (a route of C2C links
// alone through a Grace is found by the search over all links); ties go to
// the links declared first. ok is false when b cannot be
// reached from a.
func (m *Machine) Route(a, b int) (r Route, ok bool) {
	r, ok = m.bfs(a, b, true)
	if !ok {
		r, ok = m.bfs(a, b, false)
	}
	return r, ok
}

func isNVLinkFabric(k LinkKind) bool { return k == LinkNVLink || k == LinkC2C }

func (m *Machine) bfs(a, b int, nvlinkOnly bool) (Route, bool) {
	if a == b {
		return Route{}, true
	}
	return m.routeIn(m.search(a, b, nvlinkOnly, false), a, b)
}

// p2pRoute is the route peer access takes when the preferred one forbids
// P2P: the fewest hops over links and through nodes that let P2P traffic
// through, NVLink fabric first, then any (cudaDeviceCanAccessPeer is true
// where any such route exists, and the driver then never stages).
func (m *Machine) p2pRoute(a, b int, nvlinkOnly bool) (Route, bool) {
	if r, ok := m.routeIn(m.search(a, b, true, true), a, b); ok || nvlinkOnly {
		return r, ok
	}
	return m.routeIn(m.search(a, b, false, true), a, b)
}

// search runs the breadth-first search of Route from a, over NVLink-fabric
// links only or over all (p2pOnly: only over links and through nodes that
// let peer-to-peer traffic through), and returns prev: prev[v] is the link
// that reached node v, -1 if none did. It stops once stop is reached (stop
// -1: never), which leaves the route to stop as a full search would: the
// nodes on it were all reached before it.
func (m *Machine) search(a, stop int, nvlinkOnly, p2pOnly bool) []int32 {
	adj := m.adjacency()
	// One allocation: prev, then queue, the FIFO of nodes to expand, which
	// visits them in the same order as expanding the frontier layer by
	// layer.
	buf := make([]int32, 2*len(m.Nodes))
	prev, queue := buf[:len(m.Nodes):len(m.Nodes)], buf[len(m.Nodes):len(m.Nodes)]
	for i := range prev {
		prev[i] = -1
	}
	visited := func(v int) bool { return v == a || prev[v] >= 0 }
	queue = append(queue, int32(a))
	for head := 0; head < len(queue) && (stop < 0 || !visited(stop)); head++ {
		u := int(queue[head])
		if u != a {
			switch {
			case m.Nodes[u].Kind == NodeGPU:
				continue // GPUs do not forward traffic
			case nvlinkOnly && m.Nodes[u].Kind == NodeHost:
				// Nor does a CPU between two NVLink-C2C links: peer
				// copies between a Grace's GPUs cross the NVSwitch.
				continue
			case p2pOnly && !m.Nodes[u].P2P:
				continue
			}
		}
		for _, li := range adj[u] {
			l := &m.Links[li]
			if nvlinkOnly && !isNVLinkFabric(l.Kind) || p2pOnly && !l.P2P {
				continue
			}
			v := l.B
			if v == u {
				v = l.A
			}
			if visited(v) {
				continue
			}
			prev[v] = int32(li)
			queue = append(queue, int32(v))
		}
	}
	return prev
}

// routeIn returns the route from a to b in the search tree prev from a.
func (m *Machine) routeIn(prev []int32, a, b int) (Route, bool) {
	if a == b {
		return Route{}, true
	}
	if prev[b] < 0 {
		return Route{}, false
	}
	var hops []Hop
	for v := b; v != a; {
		li := int(prev[v])
		l := m.Links[li]
		if l.B == v {
			hops = append(hops, Hop{Link: li})
			v = l.A
		} else {
			hops = append(hops, Hop{Link: li, Reverse: true})
			v = l.B
		}
	}
	for i, j := 0, len(hops)-1; i < j; i, j = i+1, j-1 {
		hops[i], hops[j] = hops[j], hops[i]
	}
	return Route{Hops: hops}, true
}

// routeTrees answers Route for one validation and run, keeping each
// source's two search trees (NVLink fabric only, all links): a program's
// copies and collectives between many pairs then cost one pair of searches
// per source node rather than per pair. Past a budget of kept entries it
// answers each pair with Route.
type routeTrees struct {
	m       *Machine
	trees   map[int][2][]int32
	entries int
}

// routeTreesBudget is the most int32s a routeTrees keeps (64 MiB).
const routeTreesBudget = 1 << 24

func newRouteTrees(m *Machine) *routeTrees {
	return &routeTrees{m: m, trees: map[int][2][]int32{}}
}

// tree returns a's two search trees, or false past the budget.
func (t *routeTrees) tree(a int) ([2][]int32, bool) {
	tr, ok := t.trees[a]
	if !ok {
		if t.entries+2*len(t.m.Nodes) > routeTreesBudget {
			return tr, false
		}
		// Each search's prev, without the queue behind it in its buffer.
		tr = [2][]int32{slices.Clone(t.m.search(a, -1, true, false)), slices.Clone(t.m.search(a, -1, false, false))}
		t.trees[a] = tr
		t.entries += 2 * len(t.m.Nodes)
	}
	return tr, true
}

// hops is len(route(a, b).Hops), -1 where b cannot be reached, without
// building the route.
func (t *routeTrees) hops(a, b int) int {
	if a == b {
		return 0
	}
	tr, ok := t.tree(a)
	if !ok {
		return searchEach{t.m}.hops(a, b)
	}
	if n := t.m.hopsIn(tr[0], a, b); n >= 0 {
		return n
	}
	return t.m.hopsIn(tr[1], a, b)
}

// hopsIn is the hop count of the route from a to b in the search tree prev
// from a, or -1 where b is not reached.
func (m *Machine) hopsIn(prev []int32, a, b int) int {
	if a == b {
		return 0
	}
	if prev[b] < 0 {
		return -1
	}
	n := 0
	for v := b; v != a; n++ {
		l := &m.Links[prev[v]]
		if l.B == v {
			v = l.A
		} else {
			v = l.B
		}
	}
	return n
}

func (t *routeTrees) route(a, b int) (Route, bool) {
	if a == b {
		return Route{}, true
	}
	tr, ok := t.tree(a)
	if !ok {
		return t.m.Route(a, b)
	}
	if r, ok := t.m.routeIn(tr[0], a, b); ok {
		return r, true
	}
	return t.m.routeIn(tr[1], a, b)
}

func (t *routeTrees) nvRoute(a, b int) (Route, bool) {
	if a == b {
		return Route{}, true
	}
	tr, ok := t.tree(a)
	if !ok {
		return t.m.bfs(a, b, true)
	}
	return t.m.routeIn(tr[0], a, b)
}

// PathKind says how bytes move between two GPUs.
type PathKind uint8

// Path kinds between GPUs.
const (
	PathNone   PathKind = iota // unreachable
	PathLocal                  // the same GPU
	PathNVLink                 // peer-to-peer over NVLink only
	PathP2P                    // peer-to-peer over PCIe (or a mix of link kinds)
	PathStaged                 // no P2P: through pinned memory of a host
)

func (k PathKind) String() string {
	switch k {
	case PathNone:
		return "unreachable"
	case PathLocal:
		return "local"
	case PathNVLink:
		return "nvlink"
	case PathP2P:
		return "pcie-p2p"
	case PathStaged:
		return "host-staged"
	}
	return fmt.Sprintf("PathKind(%d)", uint8(k))
}

// GPUPath describes how a copy from GPU a to GPU b travels.
type GPUPath struct {
	Kind PathKind
	// Route is the direct route for local, NVLink and P2P paths.
	Route Route
	// Host, ToHost and FromHost describe a host-staged path: the host whose
	// pinned memory stages the bytes and the two legs.
	Host             int
	ToHost, FromHost Route
	// Relay is the GPU a collective's NVLink path passes through (see
	// CollectivePath), or -1.
	Relay int
}

// PathBetween returns how bytes move from GPU a to GPU b (indices into GPUs).
func (m *Machine) PathBetween(a, b int) GPUPath { return m.pathBetween(searchEach{m}, a, b) }

// router answers Route (route), its length (hops: -1 where there is
// none) and its search over NVLink-fabric links only (nvRoute): searchEach
// searches for each pair, routeTrees keeps each source's searches.
type router interface {
	route(a, b int) (Route, bool)
	hops(a, b int) int
	nvRoute(a, b int) (Route, bool)
}

type searchEach struct{ m *Machine }

func (s searchEach) route(a, b int) (Route, bool)   { return s.m.Route(a, b) }
func (s searchEach) nvRoute(a, b int) (Route, bool) { return s.m.bfs(a, b, true) }
func (s searchEach) hops(a, b int) int {
	r, ok := s.m.Route(a, b)
	if !ok {
		return -1
	}
	return len(r.Hops)
}

// Paths answers Route, PathBetween, StagedPath and CollectivePath for many
// pairs of one machine, keeping each source node's searches: a search per
// source instead of one per pair (topo show, p2p-test and nvbandwidth ask
// about every pair). Not safe for concurrent use.
type Paths struct{ t *routeTrees }

// NewPaths returns a Paths for m.
func (m *Machine) NewPaths() *Paths { return &Paths{t: newRouteTrees(m)} }

// Route is m.Route.
func (p *Paths) Route(a, b int) (Route, bool) { return p.t.route(a, b) }

// PathBetween is m.PathBetween.
func (p *Paths) PathBetween(a, b int) GPUPath { return p.t.m.pathBetween(p.t, a, b) }

// StagedPath is m.StagedPath.
func (p *Paths) StagedPath(a, b int) GPUPath { return p.t.m.stagedPath(p.t, a, b) }

// CollectivePath is m.CollectivePath.
func (p *Paths) CollectivePath(a, b int) GPUPath { return p.t.m.collectivePath(p.t, a, b) }

func (m *Machine) pathBetween(rt router, a, b int) GPUPath {
	if a == b {
		return GPUPath{Kind: PathLocal}
	}
	na, nb := m.GPUs[a].Node, m.GPUs[b].Node
	r, ok := rt.route(na, nb)
	if ok && !m.p2pAllowed(na, r) {
		r, ok = m.p2pRoute(na, nb, false)
	}
	if ok {
		kind := PathNVLink
		for _, h := range r.Hops {
			if !isNVLinkFabric(m.Links[h.Link].Kind) {
				kind = PathP2P
			}
		}
		return GPUPath{Kind: kind, Route: r}
	}
	return m.stagedPath(rt, a, b)
}

// StagedPath returns the host-staged path from GPU a to GPU b, whether or not
// P2P is possible: through the host with the fewest hops over both legs;
// ties prefer the source GPU's host, then the destination's, then
// declaration order. Kind is PathNone if no host reaches both.
func (m *Machine) StagedPath(a, b int) GPUPath { return m.stagedPath(searchEach{m}, a, b) }

func (m *Machine) stagedPath(rt router, a, b int) GPUPath {
	na, nb := m.GPUs[a].Node, m.GPUs[b].Node
	best, bestHops := -1, 0
	order := []int{m.GPUs[a].Host, m.GPUs[b].Host}
	for i := range m.Hosts {
		order = append(order, i)
	}
	for _, h := range order {
		hn := m.Hosts[h].Node
		n1 := rt.hops(na, hn)
		if n1 < 0 {
			continue
		}
		n2 := rt.hops(hn, nb)
		if n2 < 0 {
			continue
		}
		if n := n1 + n2; best < 0 || n < bestHops {
			best, bestHops = h, n
		}
	}
	if best < 0 {
		return GPUPath{Kind: PathNone}
	}
	// The legs' routes, built for the host chosen only.
	hn := m.Hosts[best].Node
	to, _ := rt.route(na, hn)
	from, _ := rt.route(hn, nb)
	return GPUPath{Kind: PathStaged, Host: best, ToHost: to, FromHost: from}
}

// CollectivePath returns how a collective library moves bytes from GPU a to
// GPU b: like PathBetween, except that two GPUs without an NVLink path
// between them relay through a GPU both reach over NVLink, as NCCL does
// (path type NVB, P2P through an intermediate GPU), before falling back to
// PCIe or host memory. Relay is that GPU, or -1.
func (m *Machine) CollectivePath(a, b int) GPUPath { return m.collectivePath(searchEach{m}, a, b) }

func (m *Machine) collectivePath(rt router, a, b int) GPUPath {
	p := m.pathBetween(rt, a, b)
	p.Relay = -1
	if p.Kind == PathNVLink || p.Kind == PathLocal || p.Kind == PathNone && len(m.GPUs) < 3 {
		return p
	}
	best, bestBW := -1, 0.0
	var bestRoute Route
	for k := range m.GPUs {
		if k == a || k == b {
			continue
		}
		r1, ok1 := m.nvP2PRoute(rt, m.GPUs[a].Node, m.GPUs[k].Node)
		r2, ok2 := m.nvP2PRoute(rt, m.GPUs[k].Node, m.GPUs[b].Node)
		if !ok1 || !ok2 {
			continue
		}
		bw := math.Inf(1)
		for _, h := range append(append([]Hop(nil), r1.Hops...), r2.Hops...) {
			l := &m.Links[h.Link]
			bw = math.Min(bw, l.Bandwidth/l.KernelCoef())
		}
		if bw > bestBW {
			best, bestBW = k, bw
			bestRoute = Route{Hops: append(append([]Hop(nil), r1.Hops...), r2.Hops...)}
		}
	}
	if best < 0 {
		return p
	}
	return GPUPath{Kind: PathNVLink, Route: bestRoute, Relay: best}
}

// nvP2PRoute returns the NVLink route from a to b that peer access takes:
// the preferred one, or where that forbids P2P, one that allows it.
func (m *Machine) nvP2PRoute(rt router, a, b int) (Route, bool) {
	r, ok := rt.nvRoute(a, b)
	if !ok || m.p2pAllowed(a, r) {
		return r, ok
	}
	return m.p2pRoute(a, b, true)
}

// p2pAllowed reports whether every intermediate node and every link of r
// (starting at node from) lets peer-to-peer traffic through.
func (m *Machine) p2pAllowed(from int, r Route) bool {
	at := from
	for i, h := range r.Hops {
		l := m.Links[h.Link]
		if !l.P2P {
			return false
		}
		at = l.B
		if h.Reverse {
			at = l.A
		}
		if i < len(r.Hops)-1 && !m.Nodes[at].P2P {
			return false
		}
	}
	return true
}

// KernelCoef returns the link capacity a kernel-driven transfer uses per
// byte: Bandwidth / SMBandwidth (1 when they are equal or SMBandwidth is unset).
func (l *Link) KernelCoef() float64 {
	if l.SMBandwidth <= 0 {
		return 1
	}
	return l.Bandwidth / l.SMBandwidth
}

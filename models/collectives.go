package models

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"gpusim/sim"
)

// Collectives are expanded into transfer plans the way NCCL runs them
// (shared/groundtruth/methods.md, read from NCCL v2.30.7):
//
//   - ring: the ranks form rings (channels) over the fastest links; each step
//     every rank sends a chunk to its next neighbour; all-reduce is a
//     reduce-scatter (n-1 steps, the receiver reduces) then an all-gather
//     (n-1 steps); several rings share the data in proportion to their
//     bandwidth, and rings in opposite directions use both directions of
//     full-duplex links;
//   - tree: within a node NCCL's tree is a chain; all-reduce reduces up the
//     chain and broadcasts down it, pipelined in chunks;
//   - nvls: NVLink SHARP; every GPU sends its data into the NVSwitch, which
//     reduces it, and receives the result;
//   - direct: all-to-all, every rank sends to every other at once;
//   - broadcast and reduce: a pipelined chain from (to) the root; send-recv:
//     each rank sends to the next, as nccl-tests' sendrecv does.
//
// Each transfer pays its step's latency (NCCL's per-hop hardware latency for
// the protocol and link class) and carries protocol overhead on the wire;
// the plan starts after NCCL's base latency. "auto" picks the algorithm and
// protocol with the smallest predicted time, as NCCL's tuner does.

// Collective names, as scenarios write them.
const (
	AllReduce     = "allreduce"
	AllGather     = "allgather"
	ReduceScatter = "reducescatter"
	Broadcast     = "broadcast"
	Reduce        = "reduce"
	AllToAll      = "alltoall"
	SendRecv      = "sendrecv"
)

// Collectives lists the collective names.
var Collectives = []string{AllReduce, AllGather, ReduceScatter, Broadcast, Reduce, AllToAll, SendRecv}

// Algorithms and protocols.
var (
	Algorithms = []string{"auto", "ring", "tree", "nvls", "direct"}
	Protocols  = []string{"auto", "simple", "ll", "ll128"}
)

// protocol indices, NCCL's order.
const (
	protoLL = iota
	protoLL128
	protoSimple
)

var protoNames = [3]string{"ll", "ll128", "simple"}

// NCCL's latency tables (tuning.cc, ncclTunerConstantsDefaults; methods.md
// §1.1), microseconds, indexed by protocol LL, LL128, Simple.
var (
	baseLatency = map[string][3]float64{"tree": {6.8, 14.0, 8.4}, "ring": {6.6, 14.0, 8.4}}
	hwLatNVLink = map[string][3]float64{"tree": {0.6, 1.25, 4.0}, "ring": {0.6, 1.9, 3.4}}
	hwLatPCI    = map[string][3]float64{"tree": {1.0, 1.9, 4.0}, "ring": {1.0, 2.5, 5.7}}
)

// NVLS latency: NCCL's hwLat[NVLINK][NVLS][Simple], which replaces the base
// latency for NVLS (methods.md §1.1, §1.3).
const nvlsLatency = 25 * sim.Microsecond

// Protocol wire factors: LL carries 8 data bytes per 16-byte line; NCCL
// models LL128 at 0.92 of Simple (tuning.cc; methods.md §1.2).
var protoWire = [3]float64{2, 1 / 0.92, 1}

// Per-architecture protocol limits for one node (methods.md §1.1): LL's
// absolute bus bandwidth cap, and the per-channel caps of LL128 rings and of
// trees, GB/s. Ada (SM89) uses NCCL's Ampere row; Blackwell's are NCCL
// 2.29.7-2.30's (its ring LL128 cap changed within 2.28-2.29, §1.7).
var (
	llMaxBw          = map[string]float64{"volta": 39.0, "ampere": 87.7, "ada": 87.7, "hopper": 141.0, "blackwell": 282.0}
	perChLL128Bw     = map[string]float64{"volta": 20, "ampere": 20, "ada": 20, "hopper": 36.7, "blackwell": 40}
	perChTreeBw      = map[string]float64{"volta": 26.5, "ampere": 24.0, "ada": 24.0, "hopper": 38.7, "blackwell": 70.0}
	perChTreeLL128Bw = map[string]float64{"volta": 20, "ampere": 20, "ada": 20, "hopper": 36.7, "blackwell": 55.6}
)

// treeCorrection is NCCL's treeCorrectionFactor[proto][log2(bytes/64)]
// (tuning.cc; methods.md §1.5), for tree all-reduce bandwidths.
var treeCorrection = [3][24]float64{
	{1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
	{1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
	{.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
}

func treeCorrectionFactor(proto int, bytes int64) float64 {
	if bytes < 64 {
		return 1
	}
	i := int(math.Floor(math.Log2(float64(bytes >> 6))))
	// NCCL corrects tree all-reduce below logSize 23 (512 MiB); its last
	// column serves NVLS_Tree on Blackwell only (methods.md §1.5).
	if i < 0 || i >= 23 {
		return 1
	}
	return treeCorrection[proto][i]
}

// nvlsChannels is the number of channels NCCL runs NVLS on within a node:
// 16 on Hopper, 24 on Blackwell (comm->nvlsChannels, src/transport/nvls.cc;
// methods.md §1.6).
func nvlsChannels(arch string) int {
	if arch == "blackwell" {
		return 24
	}
	return 16
}

// NVLSEfficiency is the fraction of the NVSwitch links' kernel-driven
// bandwidth that an NVLS all-reduce's algorithm bandwidth reaches with
// Hopper. Fitted to the one public measurement of NVSwitch gen3 with Hopper:
// all_reduce busbw 478.87 GB/s at 8 GiB on 8x H100 (measured.md §1f; the
// NCCL maintainer's "~480GB/s (algbw ~275GB/s)", §1e): 274 / 370.8 = 0.74.
const NVLSEfficiency = 0.74

// nvlsEfficiency is NVLSEfficiency for an architecture. NCCL's own tuning
// figure is 0.85 for Hopper and 0.74 for Blackwell (nvlsEfficiency,
// tuning.cc; methods.md §1.1); with no Blackwell measurement here, the
// Hopper fit is scaled by NCCL's ratio: 0.74 x 0.74 / 0.85 = 0.644.
func nvlsEfficiency(arch string) float64 {
	if arch == "blackwell" {
		return NVLSEfficiency * 0.74 / 0.85
	}
	return NVLSEfficiency
}

// chunkBytes is the size of the chunks pipelined chains (trees, broadcast,
// reduce) and NVLS move, per protocol: a few of NCCL's protocol buffer steps.
var chunkBytes = [3]float64{32 << 10, 128 << 10, 512 << 10}

// A pipeline of k chunks over h hops takes (k + h - 1) chunk times, so its
// fill costs (h-1)/k of the time at NCCL's chunk sizes' bandwidth, where
// NCCL's own chunks make it negligible: past a size, a plan holds at most
// fillChunks chunks a hop (a fill of at most 1/fillChunks, 3%), and at
// least minChunks where that is more (fewer tasks would save little); but
// a chain holds at most maxChainTasks tasks (chunks x hops), so that a
// chain of 142 hops (a tree of 72 GPUs) costs seconds, not a minute, and
// fills for about 15% of its time.
const (
	fillChunks    = 32
	minChunks     = 256
	maxChainTasks = 1 << 17
)

// chunks returns how many chunks a pipelined plan of size bytes uses over
// hops hops a chunk.
func chunks(size int64, proto, hops int) int {
	k := int(math.Ceil(float64(size) / chunkBytes[proto]))
	limit := fillChunks * max(hops, 1)
	if hops > 0 {
		limit = min(limit, maxChainTasks/hops)
	}
	return min(max(k, 1), max(minChunks, limit))
}

// CollSpec describes one collective.
type CollSpec struct {
	Kind string
	// GPUs are the ranks' GPUs (indices into Machine.GPUs), in rank order.
	GPUs []int
	// Bytes is the size as nccl-tests prints it: the buffer of all-reduce,
	// broadcast and reduce; all ranks' data for all-gather and
	// reduce-scatter; one rank's send buffer for all-to-all; what each rank
	// sends for send-recv.
	Bytes int64
	// Algorithm and Protocol: "" or "auto" lets the tuner choose.
	Algorithm, Protocol string
	// Channels overrides the channel count (0: 24 over NVLink, 32 with
	// Blackwell, 4 otherwise: twice the 12, 16 and 2 channels NCCL's search
	// finds on such machines, methods.md §2.4-2.6). Each channel is one SM
	// block driving one ring, so fewer channels claim fewer SMs and move
	// less: every algorithm and protocol reaches channels/default of the
	// bandwidth the default count drives (NVLS: channels/16 on Hopper, /24
	// on Blackwell, NCCL's NVLS channel counts); more channels than the
	// default add nothing.
	Channels int
	// SMShare overrides the share of SMs the kernels claim (0: one SM per
	// channel, as NCCL runs one block per channel).
	SMShare float64
	// Root is the root rank of broadcast and reduce.
	Root int
	// MaxTasks, if above zero, is the most transfers the plan may have: a
	// ring over thousands of GPUs plans tens of millions (PlanTaskBytes
	// each while it is planned), more than memory may hold.
	MaxTasks int
	// InPlace: the receive buffer is the send buffer (as DDP's and
	// Megatron's all-reduces use it). It matters with one rank only: NCCL
	// copies an out-of-place buffer and does nothing in place.
	InPlace bool
}

// ring is one channel's cycle over the ranks with its bandwidth.
type ring struct {
	order []int   // ranks
	bw    float64 // bottleneck kernel-driven bandwidth of its edges, bytes/s
}

// planner holds what a plan needs about the machine.
type planner struct {
	m      *sim.Machine
	models []GPU
	spec   CollSpec
	n      int
	arch   string
	nvlink bool // every ring edge is NVLink
	rings  []ring
	chans  int
	nvls   int // NVLS switch node, -1 if none
	nvlsBW float64

	// chanShare and nvlsShare are the fractions of the links' kernel-driven
	// bandwidth that chans channels drive: rings and trees, and NVLS.
	chanShare, nvlsShare float64
}

// BuildCollective expands a collective into a plan. models[i] is GPU i's model.
func BuildCollective(m *sim.Machine, models []GPU, spec CollSpec) (plan *sim.CollPlan, err error) {
	n := len(spec.GPUs)
	if n == 0 {
		return nil, fmt.Errorf("a collective needs at least one GPU")
	}
	if spec.Bytes < 0 {
		return nil, fmt.Errorf("negative size")
	}
	if !contains(Collectives, spec.Kind) {
		return nil, fmt.Errorf("unknown collective %q; collectives: %s", spec.Kind, strings.Join(Collectives, ", "))
	}
	if spec.Root < 0 || spec.Root >= n {
		return nil, fmt.Errorf("root rank %d is not among the %d ranks", spec.Root, n)
	}
	p := &planner{m: m, models: models, spec: spec, n: n, nvls: -1}
	smMin := math.MaxInt
	// NCCL picks its per-architecture rows by the lowest compute capability
	// in the communicator (methods.md §1.1); a GPU of no known architecture
	// counts as Hopper.
	for i, g := range spec.GPUs {
		a := models[g].Arch
		if _, ok := llMaxBw[a]; !ok {
			a = "hopper"
		}
		if i == 0 || archRank(a) < archRank(p.arch) {
			p.arch = a
		}
		smMin = min(smMin, models[g].SMs)
	}
	p.findRings()
	p.findNVLS()
	if len(p.rings) == 0 {
		return nil, fmt.Errorf("%s", p.unreachable())
	}
	defaultChans := 4
	if p.nvlink {
		defaultChans = 24
		if p.arch == "blackwell" {
			// NCCL's Blackwell search over 18 NVLink5 links (18 x 40.1 GB/s)
			// finds 8 rings at 90 GB/s, duplicated to 16 x 45, and runs
			// twice that (methods.md §2.4-2.5, applied by hand as §2.6 does
			// for H100's 6 -> 12 -> 24).
			defaultChans = 32
		}
	}
	p.chans = spec.Channels
	if p.chans <= 0 {
		p.chans = defaultChans
	}
	p.chanShare = math.Min(1, float64(p.chans)/float64(defaultChans))
	p.nvlsShare = math.Min(1, float64(p.chans)/float64(nvlsChannels(p.arch)))
	share := spec.SMShare
	if share <= 0 {
		share = 1
		if smMin > 0 {
			share = math.Min(1, float64(p.chans)/float64(smMin))
		}
	}
	// NCCL discards an empty collective, and a one-rank one in place,
	// before it picks an algorithm: nothing reaches the streams (taskAppend
	// and ncclLaunchOneRank in enqueue.cc). Sends and receives (all-to-all
	// is a group of them) still meet, even empty. A plan without tasks is
	// such a call. A forced algorithm or protocol the ranks cannot run is
	// refused all the same, as it is at other sizes.
	p2p := spec.Kind == SendRecv || spec.Kind == AllToAll
	var discarded *sim.CollPlan
	if !p2p && (spec.Bytes == 0 || n == 1 && spec.InPlace) {
		discarded = &sim.CollPlan{Name: spec.Kind, Algorithm: "none", Protocol: "none", Bytes: spec.Bytes, Ranks: spec.GPUs, SMShare: share}
		if n == 1 {
			return discarded, nil // one rank has no algorithm to check
		}
	}
	algo, proto, err := p.choose()
	if err != nil {
		return nil, err
	}
	if discarded != nil {
		return discarded, nil
	}
	if algo == "nvls" && spec.SMShare <= 0 && smMin > 0 {
		// NVLS runs on at most nvlsChannels channels, one SM each.
		share = math.Min(1, float64(min(p.chans, nvlsChannels(p.arch)))/float64(smMin))
	}
	plan = &sim.CollPlan{Name: spec.Kind, Algorithm: algo, Protocol: protoNames[proto], Bytes: spec.Bytes, Ranks: spec.GPUs, SMShare: share}
	defer func() {
		if e := recover(); e != nil {
			if _, ok := e.(tooManyTasks); !ok {
				panic(e)
			}
			plan, err = nil, &PlanTooLargeError{Algorithm: algo, GPUs: n, Max: spec.MaxTasks}
		}
	}()
	if n == 1 {
		// One rank out of place: NCCL copies the buffer within the GPU
		// with cudaMemcpyAsync and runs no algorithm (ncclLaunchOneRank,
		// enqueue.cc): a copy engine's fixed cost, no tuner's latency.
		plan.Algorithm, plan.Protocol = "copy", "none"
		plan.StartDelay = p.models[spec.GPUs[0]].CopyOverhead
		p.task(plan, sim.CollTask{From: 0, To: 0, Bytes: float64(spec.Bytes), Wire: 1, Bound: math.Inf(1)})
		return plan, nil
	}
	switch algo {
	case "nvls":
		plan.StartDelay = nvlsLatency
		p.planNVLS(plan)
	case "direct":
		plan.StartDelay = p.baseLat("ring", proto)
		p.planDirect(plan, proto)
	case "tree":
		plan.StartDelay = p.baseLat("tree", proto)
		p.planChain(plan, proto, "tree")
	default:
		plan.StartDelay = p.baseLat("ring", proto)
		switch spec.Kind {
		case Broadcast, Reduce:
			p.planChain(plan, proto, "ring")
		case SendRecv:
			p.planSendRecv(plan, proto)
		default:
			p.planRing(plan, proto)
		}
	}
	return plan, nil
}

func archRank(a string) int {
	switch a {
	case "volta":
		return 0
	case "ampere":
		return 1
	case "ada":
		return 2
	case "blackwell":
		return 4
	}
	return 3
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// edge is the route between two ranks' GPUs with its kernel-driven
// bandwidth and the link directions it loads.
type edge struct {
	dirs   []int // link direction resources (2*link + reverse)
	coefs  []float64
	bw     float64
	nvlink bool
}

func (p *planner) edge(a, b int) edge {
	m := p.m
	ga, gb := p.spec.GPUs[a], p.spec.GPUs[b]
	path := m.CollectivePath(ga, gb)
	var e edge
	if path.Kind == sim.PathNone {
		return edge{} // no route: bandwidth 0
	}
	e.bw = math.Inf(1)
	add := func(rt sim.Route) {
		for _, h := range rt.Hops {
			l := &m.Links[h.Link]
			d := 2 * h.Link
			if h.Reverse {
				d++
			}
			e.dirs = append(e.dirs, d)
			e.coefs = append(e.coefs, l.KernelCoef())
			e.bw = math.Min(e.bw, l.Bandwidth/l.KernelCoef())
		}
	}
	switch path.Kind {
	case sim.PathStaged:
		add(path.ToHost)
		add(path.FromHost)
		e.bw = math.Min(e.bw, m.Hosts[path.Host].MemoryBandwidth/2)
	case sim.PathNVLink:
		add(path.Route)
		e.nvlink = true
	default:
		add(path.Route)
	}
	return e
}

// unreachable names a pair of ranks with no path between them.
func (p *planner) unreachable() string {
	for a := range p.spec.GPUs {
		for b := range p.spec.GPUs {
			if a != b && p.m.CollectivePath(p.spec.GPUs[a], p.spec.GPUs[b]).Kind == sim.PathNone {
				return fmt.Sprintf("%s and %s cannot reach each other: no route, and no host reachable from both", p.m.GPUs[p.spec.GPUs[a]].Name, p.m.GPUs[p.spec.GPUs[b]].Name)
			}
		}
	}
	return "no ring over the ranks has any bandwidth"
}

// findRings finds up to 8 rings, each the cycle over the ranks whose weakest
// edge has the most bandwidth left by the rings before it (by exhaustive
// search up to 9 ranks; larger groups use the rank order). Link directions
// are full duplex, so a ring and its reverse use different capacity.
func (p *planner) findRings() {
	n := p.n
	if n == 1 {
		p.rings = []ring{{order: []int{0}, bw: math.Inf(1)}}
		p.nvlink = true
		return
	}
	edges := make([][]edge, n)
	for a := range edges {
		edges[a] = make([]edge, n)
		if n > 9 {
			// The rank order is the only candidate: only its n edges
			// are read (a link direction's residual is the same from
			// any edge that crosses it), not the n^2 of all pairs.
			edges[a][(a+1)%n] = p.edge(a, (a+1)%n)
			continue
		}
		for b := range edges[a] {
			if a != b {
				edges[a][b] = p.edge(a, b)
			}
		}
	}
	residual := map[int]float64{} // link direction -> kernel-driven bandwidth left
	m := p.m
	for a := range edges {
		for b := range edges[a] {
			for i, d := range edges[a][b].dirs {
				l := &m.Links[d/2]
				residual[d] = l.Bandwidth / edges[a][b].coefs[i]
			}
		}
	}
	edgeBW := func(a, b int) float64 {
		e := &edges[a][b]
		bw := e.bw
		for _, d := range e.dirs {
			bw = math.Min(bw, residual[d])
		}
		return bw
	}
	ringBW := func(order []int) float64 {
		bw := math.Inf(1)
		for i := range order {
			bw = math.Min(bw, edgeBW(order[i], order[(i+1)%len(order)]))
		}
		return bw
	}
	var candidates [][]int
	if n <= 9 {
		rest := make([]int, n-1)
		for i := range rest {
			rest[i] = i + 1
		}
		permute(rest, func(perm []int) {
			candidates = append(candidates, append([]int{0}, perm...))
		})
	} else {
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		candidates = [][]int{order}
	}
	allNVLink := func(order []int) bool {
		for i := range order {
			if !edges[order[i]][order[(i+1)%n]].nvlink {
				return false
			}
		}
		return true
	}
	for len(p.rings) < 8 {
		best, bestBW := -1, 0.0
		for i, c := range candidates {
			// Once a ring runs over NVLink alone, the others stay on
			// NVLink too, as NCCL's channels do.
			if len(p.rings) > 0 && allNVLink(p.rings[0].order) && !allNVLink(c) {
				continue
			}
			if bw := ringBW(c); bw > bestBW*(1+1e-9) {
				best, bestBW = i, bw
			}
		}
		if best < 0 || bestBW <= 0 || (len(p.rings) > 0 && bestBW < 0.1*p.rings[0].bw) {
			break
		}
		order := candidates[best]
		p.rings = append(p.rings, ring{order: order, bw: bestBW})
		for i := range order {
			a, b := order[i], order[(i+1)%n]
			for _, d := range edges[a][b].dirs {
				residual[d] -= bestBW
			}
		}
	}
	p.nvlink = len(p.rings) > 0
	for _, r := range p.rings {
		for i := range r.order {
			if !edges[r.order[i]][r.order[(i+1)%n]].nvlink {
				p.nvlink = false
			}
		}
	}
}

// permute calls f with every permutation of xs (in a fixed order).
func permute(xs []int, f func([]int)) {
	var rec func(k int)
	rec = func(k int) {
		if k == len(xs) {
			f(append([]int(nil), xs...))
			return
		}
		for i := k; i < len(xs); i++ {
			xs[k], xs[i] = xs[i], xs[k]
			rec(k + 1)
			xs[k], xs[i] = xs[i], xs[k]
		}
	}
	rec(0)
}

// findNVLS finds an NVSwitch with in-switch reduction that every rank reaches
// over NVLink alone, and the weakest GPU link to it.
func (p *planner) findNVLS() {
	if archRank(p.arch) < archRank("hopper") || p.n < 2 {
		return
	}
	m := p.m
	for _, sw := range m.Switches {
		if !sw.NVLS {
			continue
		}
		bw := math.Inf(1)
		ok := true
		for _, g := range p.spec.GPUs {
			rt, found := m.Route(m.GPUs[g].Node, sw.Node)
			if !found {
				ok = false
				break
			}
			for _, h := range rt.Hops {
				l := &m.Links[h.Link]
				if l.Kind != sim.LinkNVLink {
					ok = false
				}
				bw = math.Min(bw, l.Bandwidth/l.KernelCoef())
			}
		}
		if ok {
			p.nvls, p.nvlsBW = sw.Node, bw
			return
		}
	}
}

func (p *planner) hwLat(algo string, proto int) sim.Time {
	t := hwLatPCI
	if p.nvlink {
		t = hwLatNVLink
	}
	return sim.Time(t[algo][proto] * float64(sim.Microsecond))
}

// chainHopLat is a ring broadcast's or reduce's latency a hop: NCCL takes
// the tree's entry for Simple and the ring's for LL and LL128 (methods.md
// §1.3).
func (p *planner) chainHopLat(proto int) sim.Time {
	if proto == protoSimple {
		return p.hwLat("tree", proto)
	}
	return p.hwLat("ring", proto)
}

func (p *planner) baseLat(algo string, proto int) sim.Time {
	return sim.Time(baseLatency[algo][proto] * float64(sim.Microsecond))
}

// ringBusBW is the bus bandwidth of the rings under a protocol, with NCCL's
// caps (search channels are half the runtime channels). NCCL's bus
// bandwidth is the channel count times the per-channel bandwidth its search
// found (methods.md §1.2, busBw = nChannels x bw), so the links' share that
// the channels drive scales it before the protocol's caps.
func (p *planner) ringBusBW(proto int) float64 {
	bw := p.totalRingBW() * p.chanShare / protoWire[proto]
	searchCh := float64(max(1, p.chans/2))
	switch proto {
	case protoLL:
		bw = math.Min(bw, llMaxBw[p.arch]*1e9)
	case protoLL128:
		bw = math.Min(bw, searchCh*perChLL128Bw[p.arch]*1e9)
	}
	return bw
}

// totalRingBW sums the rings' bandwidths.
func (p *planner) totalRingBW() float64 {
	t := 0.0
	for _, r := range p.rings {
		t += r.bw
	}
	return t
}

// treeAlgBW is NCCL's tree all-reduce algorithm bandwidth (tuning.cc;
// methods.md §1.2, §1.5): x0.92 and per-channel capped for every protocol,
// then LL /3.8 and capped at llMaxBw, LL128 x7/9 and per-channel capped;
// half of that, times the tree correction factor for the size.
func (p *planner) treeAlgBW(proto int) float64 {
	bus := p.totalRingBW() * p.chanShare
	searchCh := float64(max(1, p.chans/2))
	// NCCL's refinements in its order (methods.md §1.2, step 5): the tree
	// all-reduce's cap for every protocol first, then LL's and LL128's.
	bus = math.Min(0.92*bus, searchCh*perChTreeBw[p.arch]*1e9)
	switch proto {
	case protoLL:
		bus = math.Min(bus/3.8, llMaxBw[p.arch]*1e9)
	case protoLL128:
		bus = math.Min(bus*7/9, searchCh*perChTreeLL128Bw[p.arch]*1e9)
	}
	return bus * 0.5 * treeCorrectionFactor(proto, p.spec.Bytes)
}

// busToAlg converts bus bandwidth to algorithm bandwidth (nccl-tests).
func (p *planner) busToAlg() float64 {
	n := float64(p.n)
	switch p.spec.Kind {
	case AllReduce:
		return n / (2 * (n - 1))
	case AllGather, ReduceScatter, AllToAll:
		return n / (n - 1)
	}
	return 1
}

// nsteps is NCCL's step count for the latency model.
func (p *planner) nsteps() int {
	switch p.spec.Kind {
	case AllReduce:
		return 2 * (p.n - 1)
	case AllGather, ReduceScatter:
		return p.n - 1
	case AllToAll, SendRecv:
		return 1
	}
	return p.n
}

// predict is the tuner's time estimate for an algorithm and protocol, or
// -1 where it does not apply.
func (p *planner) predict(algo string, proto int) float64 {
	size := float64(p.spec.Bytes)
	kind := p.spec.Kind
	if proto == protoLL128 && !p.nvlink && (p.spec.Protocol == "" || p.spec.Protocol == "auto") {
		return -1 // NCCL enables LL128 by default over NVLink only; NCCL_PROTO=LL128 forces it (methods.md §1.4)
	}
	switch algo {
	case "ring":
		if kind == AllToAll {
			return -1
		}
		hop := p.hwLat("ring", proto)
		if kind == Broadcast || kind == Reduce {
			hop = p.chainHopLat(proto)
		}
		lat := p.baseLat("ring", proto) + sim.Time(p.nsteps())*hop
		return lat.Seconds() + size/(p.ringBusBW(proto)*p.busToAlg())
	case "tree":
		if kind != AllReduce {
			return -1
		}
		lat := p.baseLat("tree", proto) + sim.Time(2*(p.n-1))*p.hwLat("tree", proto)
		return lat.Seconds() + size/p.treeAlgBW(proto)
	case "nvls":
		if kind != AllReduce || p.nvls < 0 || proto != protoSimple {
			return -1
		}
		return nvlsLatency.Seconds() + size/(p.nvlsBW*nvlsEfficiency(p.arch)*p.nvlsShare)
	case "direct":
		if kind != AllToAll {
			return -1
		}
		lat := p.baseLat("ring", proto) + p.hwLat("ring", proto)
		return lat.Seconds() + size/(p.ringBusBW(proto)*p.busToAlg())
	}
	return -1
}

// choose resolves "auto" the way NCCL's tuner does: the smallest predicted
// time over the enabled algorithms and protocols, ties to the first in
// NCCL's order (tree, ring, ..., nvls; LL, LL128, Simple).
func (p *planner) choose() (string, int, error) {
	algos := []string{"tree", "ring", "nvls", "direct"}
	if a := p.spec.Algorithm; a != "" && a != "auto" {
		algos = []string{a}
	}
	protos := []int{protoLL, protoLL128, protoSimple}
	if pr := p.spec.Protocol; pr != "" && pr != "auto" {
		i := indexOf(protoNames[:], pr)
		if i < 0 {
			return "", 0, fmt.Errorf("unknown protocol %q; protocols: %s", pr, strings.Join(Protocols, ", "))
		}
		protos = []int{i}
	}
	bestA, bestP, bestT := "", 0, math.Inf(1)
	for _, a := range algos {
		for _, pr := range protos {
			t := p.predict(a, pr)
			if t >= 0 && t < bestT {
				bestA, bestP, bestT = a, pr, t
			}
		}
	}
	if bestA == "" {
		return "", 0, fmt.Errorf("%s", p.why(algos, protos))
	}
	return bestA, bestP, nil
}

func (p *planner) why(algos []string, protos []int) string {
	a := algos[0]
	kind := p.spec.Kind
	switch {
	case len(algos) == 1 && a == "nvls" && kind != AllReduce:
		return "gpusim models algorithm nvls for all-reduce only (NCCL also runs it for all-gather and reduce-scatter within a node)"
	case len(algos) == 1 && a == "nvls" && p.nvls < 0 && p.n < 2:
		return "algorithm nvls needs at least two ranks (NCCL runs a one-rank collective as a copy)"
	case len(algos) == 1 && a == "nvls" && p.nvls < 0:
		return "algorithm nvls needs Hopper or later GPUs all on NVLink to one NVSwitch with nvls: true"
	case len(algos) == 1 && a == "nvls":
		return "algorithm nvls runs with protocol simple only"
	case len(algos) == 1 && a == "tree" && (kind == Broadcast || kind == Reduce):
		return "algorithm tree runs all-reduce only (NCCL runs broadcast and reduce as rings)"
	case len(algos) == 1 && a == "tree" && kind != AllReduce:
		return "algorithm tree runs all-reduce only"
	case len(algos) == 1 && a == "direct" && kind != AllToAll:
		return "algorithm direct runs all-to-all only"
	case len(algos) == 1 && a == "ring" && kind == AllToAll:
		return "all-to-all runs with algorithm direct"
	}
	if !contains(Algorithms, a) {
		return fmt.Sprintf("unknown algorithm %q; algorithms: %s", a, strings.Join(Algorithms, ", "))
	}
	return "no algorithm and protocol of the requested ones can run this collective here"
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

// task appends a transfer and returns its index. Past spec.MaxTasks it
// stops the planning (BuildCollective says why).
func (p *planner) task(plan *sim.CollPlan, t sim.CollTask) int {
	if t.Switch == 0 && t.From >= 0 && t.To >= 0 {
		t.Switch = -1
	}
	if p.spec.MaxTasks > 0 && len(plan.Tasks) >= p.spec.MaxTasks {
		panic(tooManyTasks{})
	}
	plan.Tasks = append(plan.Tasks, t)
	return len(plan.Tasks) - 1
}

// tooManyTasks stops a plan past CollSpec.MaxTasks.
type tooManyTasks struct{}

// PlanTooLargeError says a plan would have more transfers than
// CollSpec.MaxTasks: the memory free, not the input, is short.
type PlanTooLargeError struct {
	Algorithm string
	GPUs, Max int
}

func (e *PlanTooLargeError) Error() string {
	return fmt.Sprintf("its %s plan over %d GPUs has more than %d transfers, more than the memory free here holds (about %d bytes each): use fewer GPUs, or run where more memory is free", e.Algorithm, e.GPUs, e.Max, PlanTaskBytes)
}

// PlanTaskBytes is about what a plan's transfer takes in memory at the
// peak of its planning: a ring all-reduce over 3,000 GPUs, 18 M transfers,
// holds 110 bytes a transfer once built (a 96-byte CollTask and two
// dependencies) but allocates 540 while its lists grow, and the process
// peaked at 460 bytes a transfer (8.3 GB, gpusim validate, GOGC=400).
const PlanTaskBytes = 500

// share splits the data among the rings in proportion to their bandwidth.
func (p *planner) share(i int) float64 {
	total := 0.0
	for _, r := range p.rings {
		total += r.bw
	}
	if math.IsInf(total, 1) || total == 0 {
		return 1 / float64(len(p.rings))
	}
	return p.rings[i].bw / total
}

// bound is the rate cap for one ring's transfers: the channels' share of the
// links, LL's absolute cap and LL128's per-channel cap, shared by the rings
// in proportion.
func (p *planner) bound(proto, ringIdx int) float64 {
	return p.capBus(proto) * p.share(ringIdx)
}

// planRing: all-reduce, all-gather, reduce-scatter on every ring.
func (p *planner) planRing(plan *sim.CollPlan, proto int) {
	n := p.n
	steps := n - 1
	if p.spec.Kind == AllReduce {
		steps = 2 * (n - 1)
	}
	lat := p.hwLat("ring", proto)
	for ri, r := range p.rings {
		chunk := float64(p.spec.Bytes) * p.share(ri) / float64(n)
		bound := p.bound(proto, ri)
		prev := make([]int, n) // task that delivered to position i in the last step
		sent := make([]int, n) // position i's send of the last step
		for k := 0; k < steps; k++ {
			cur := make([]int, n)
			for pos := 0; pos < n; pos++ {
				t := sim.CollTask{
					From: r.order[pos], To: r.order[(pos+1)%n], Bytes: chunk,
					Wire: protoWire[proto], Bound: bound, Delay: lat,
					Reduce: p.spec.Kind == ReduceScatter || (p.spec.Kind == AllReduce && k < n-1),
				}
				if k > 0 {
					// The chunk this rank received last step, and its own
					// send of last step: a channel's sends to its next rank
					// go in order over one connection (NCCL's FIFO of
					// steps), as a chain's chunks do. Without the second, a
					// rank fed by a faster link sent its next chunk beside
					// the last on its slower one, the two shared it, and
					// the ring stalled behind the later one (rings over
					// unequal links lost up to a tenth of their bandwidth,
					// and more when a link got faster).
					t.Deps = deps(prev[pos], sent[pos])
				}
				sent[pos] = p.task(plan, t)
				cur[(pos+1)%n] = sent[pos]
			}
			prev = cur
		}
	}
}

// planChain: a pipelined chain over each ring's order, carrying the ring's
// share of the data. For trees (all-reduce), chunks go up the chain to its
// head with reductions and back down; for broadcast, from the root down; for
// reduce, up to the root.
func (p *planner) planChain(plan *sim.CollPlan, proto int, algo string) {
	for ri := range p.rings {
		p.planOneChain(plan, proto, algo, ri)
	}
}

func (p *planner) planOneChain(plan *sim.CollPlan, proto int, algo string, ri int) {
	n := p.n
	order := append([]int(nil), p.rings[ri].order...)
	// Rotate so that the root heads the chain.
	root := p.spec.Root
	if algo == "tree" {
		root = order[0]
	}
	for order[0] != root {
		order = append(order[1:], order[0])
	}
	lat := p.hwLat(algo, proto)
	if algo == "ring" {
		lat = p.chainHopLat(proto)
	}
	bytes := int64(float64(p.spec.Bytes) * p.share(ri))
	up := p.spec.Kind == Reduce || algo == "tree"
	down := p.spec.Kind == Broadcast || algo == "tree"
	hops := 0
	if up {
		hops += n - 1
	}
	if down {
		hops += n - 1
	}
	k := chunks(bytes, proto, hops)
	chunk := float64(p.spec.Bytes) * p.share(ri) / float64(k)
	bound := p.bound(proto, ri)
	if algo == "tree" {
		// NCCL's tree model, shared among the rings (methods.md §1.2).
		bound = p.treeAlgBW(proto) * p.share(ri)
	}
	// last[slot] is the previous chunk's task on each hop: up hops use slots
	// 0..n-2 (hop h joins order[h+1] to order[h]), down hops n-1..2n-3.
	last := make([]int, 2*(n-1))
	for i := range last {
		last[i] = -1
	}
	// A rank holds at most slots chunks it has received and not yet sent
	// on: NCCL's buffers of each connection, NCCL_STEPS slots of
	// bufferPayload[proto] / 8 bytes a channel (methods.md §3), the
	// ring's channels together. A chunk enters a hop once the chunk slots
	// before it has left the next hop, so the head of a chain cannot run
	// ahead of its slowest hop by more than the buffers: a broadcast's
	// root sends until about when the last rank receives, as NCCL's does.
	// At least two, so that neighbouring hops still overlap where plan
	// chunks are larger than NCCL's buffers.
	slots := 2
	if chans := math.Max(1, float64(p.chans)*p.share(ri)); chunk > 0 {
		slots = max(slots, int(bufferPayload[proto]*chans/chunk))
	}
	// route[c] is chunk c's tasks in the order it crosses the hops.
	route := make([][]int, k)
	// Each hop's latency delays the first chunk through it (the pipeline
	// fill); later chunks follow at the hop's bandwidth.
	delay := func(c int) sim.Time {
		if c == 0 {
			return lat
		}
		return 0
	}
	for c := 0; c < k; c++ {
		dep := -1
		// freed is the task after which the receiver of chunk c's next
		// hop has a slot for it: chunk c-slots leaving the hop after.
		freed := func() int {
			if c < slots || len(route[c-slots]) <= len(route[c])+1 {
				return -1
			}
			return route[c-slots][len(route[c])+1]
		}
		if up {
			for h := n - 2; h >= 0; h-- {
				t := sim.CollTask{From: order[h+1], To: order[h], Bytes: chunk, Wire: protoWire[proto], Bound: bound, Delay: delay(c), Reduce: true}
				t.Deps = deps(dep, last[h], freed())
				dep = p.task(plan, t)
				last[h] = dep
				route[c] = append(route[c], dep)
			}
		}
		if down {
			for h := 0; h < n-1; h++ {
				slot := n - 1 + h
				t := sim.CollTask{From: order[h], To: order[h+1], Bytes: chunk, Wire: protoWire[proto], Bound: bound, Delay: delay(c)}
				t.Deps = deps(dep, last[slot], freed())
				dep = p.task(plan, t)
				last[slot] = dep
				route[c] = append(route[c], dep)
			}
		}
	}
}

// bufferPayload is the data NCCL's buffers of one connection of one
// channel hold, per protocol (LL, LL128, Simple): 512 KiB of LL lines
// (half of them flags), 4,915,200 B of LL128 lines (120 of each 128 B
// data) and 4 MiB, the defaults of computeBuffSizes (methods.md §3).
var bufferPayload = [3]float64{512 << 10 / 2, 4915200 * 15 / 16, 4 << 20}

func deps(ds ...int) []int {
	var out []int
	for _, d := range ds {
		if d >= 0 {
			out = append(out, d)
		}
	}
	sort.Ints(out)
	return out
}

// planNVLS: every rank sends each chunk into the switch; the switch reduces
// it and sends the result to every rank.
func (p *planner) planNVLS(plan *sim.CollPlan) {
	k := chunks(p.spec.Bytes, protoSimple, 2) // up and down
	chunk := float64(p.spec.Bytes) / float64(k)
	// The efficiency takes link capacity, not bytes: each chunk crosses
	// each GPU's link once up and once down (Crossing).
	eff := nvlsEfficiency(p.arch)
	wire := 1 / eff
	// Fewer channels than NCCL's NVLS count drive a share of the links.
	bound := math.Inf(1)
	if p.nvlsShare < 1 {
		bound = p.nvlsBW * eff * p.nvlsShare
	}
	prevUp := make([]int, p.n)
	prevDown := make([]int, p.n)
	for i := range prevUp {
		prevUp[i], prevDown[i] = -1, -1
	}
	for c := 0; c < k; c++ {
		ups := make([]int, p.n)
		for r := 0; r < p.n; r++ {
			ups[r] = p.task(plan, sim.CollTask{From: r, To: -1, Switch: p.nvls, Bytes: chunk, Wire: wire, Crossing: 1, Bound: bound, Deps: deps(prevUp[r])})
			prevUp[r] = ups[r]
		}
		// The downs wait for every up through one join: n + n
		// dependencies instead of n x n.
		join := p.task(plan, sim.CollTask{From: -1, To: -1, Switch: -1, Wire: 1, Bound: math.Inf(1), Deps: ups})
		for r := 0; r < p.n; r++ {
			prevDown[r] = p.task(plan, sim.CollTask{From: -1, To: r, Switch: p.nvls, Bytes: chunk, Wire: wire, Crossing: 1, Bound: bound, Deps: deps(prevDown[r], join)})
		}
	}
}

// planDirect: all-to-all, every rank sends its block to every other rank.
func (p *planner) planDirect(plan *sim.CollPlan, proto int) {
	block := float64(p.spec.Bytes) / float64(p.n)
	lat := p.hwLat("ring", proto)
	// A protocol's bus bandwidth cap bounds each rank's sending, shared by
	// its n-1 transfers.
	bound := math.Inf(1)
	if b := p.capBus(proto); !math.IsInf(b, 1) {
		bound = b / float64(p.n-1)
	}
	for a := 0; a < p.n; a++ {
		for b := 0; b < p.n; b++ {
			if a != b {
				p.task(plan, sim.CollTask{From: a, To: b, Bytes: block, Wire: protoWire[proto], Bound: bound, Delay: lat})
			}
		}
	}
}

// capBus is the protocol's bus bandwidth cap with the channels' share of
// the links, or +Inf when the links bind first.
func (p *planner) capBus(proto int) float64 {
	capped := p.ringBusBW(proto)
	if capped >= p.totalRingBW()/protoWire[proto]*(1-1e-12) {
		return math.Inf(1)
	}
	return capped
}

// planSendRecv: each rank sends its buffer to the next rank.
func (p *planner) planSendRecv(plan *sim.CollPlan, proto int) {
	lat := p.hwLat("ring", proto)
	for a := 0; a < p.n; a++ {
		p.task(plan, sim.CollTask{From: a, To: (a + 1) % p.n, Bytes: float64(p.spec.Bytes), Wire: protoWire[proto], Bound: p.capBus(proto), Delay: lat})
	}
}

// SendPlan is a point-to-point transfer of bytes from GPU a to GPU b, as an
// ncclSend matched by an ncclRecv: a two-rank plan (rank 0 sends, rank 1
// receives) with NCCL's Simple latencies for the path's link class.
func SendPlan(m *sim.Machine, ms []GPU, a, b int, bytes int64) *sim.CollPlan {
	return ExchangePlan(m, ms, a, b, bytes, -1)
}

// ExchangePlan is a send of ab bytes from GPU a to GPU b together with a send
// of ba bytes from b to a (a grouped ncclSend/ncclRecv pair, as pipeline
// schedules exchange activations and gradients); ba < 0 means none.
func ExchangePlan(m *sim.Machine, ms []GPU, a, b int, ab, ba int64) *sim.CollPlan {
	bytes := ab
	hw := hwLatPCI
	if m.CollectivePath(a, b).Kind == sim.PathNVLink {
		hw = hwLatNVLink
	}
	share := 1.0
	if sms := min(ms[a].SMs, ms[b].SMs); sms > 0 {
		share = math.Min(1, 2/float64(sms)) // NCCL's point-to-point kernels run on a couple of blocks
	}
	plan := &sim.CollPlan{Name: "send", Algorithm: "p2p", Protocol: "simple", Bytes: bytes, Ranks: []int{a, b}, SMShare: share,
		StartDelay: sim.Time(baseLatency["ring"][protoSimple] * float64(sim.Microsecond))}
	lat := sim.Time(hw["ring"][protoSimple] * float64(sim.Microsecond))
	var p planner // no limit on two transfers
	p.task(plan, sim.CollTask{From: 0, To: 1, Bytes: float64(bytes), Wire: 1, Bound: math.Inf(1), Delay: lat})
	if ba >= 0 {
		plan.Name, plan.Bytes = "exchange", ab+ba
		p.task(plan, sim.CollTask{From: 1, To: 0, Bytes: float64(ba), Wire: 1, Bound: math.Inf(1), Delay: lat})
	}
	return plan
}

// NVLinkDomains splits gpus (indices into m.GPUs) by the NVLink fabric
// between them: GPUs joined by NVLink links, directly or through
// switches, share a domain (a node's NVSwitch, an NVL72 rack, a DGX-1's
// cube mesh); PCIe, NVLink-C2C and the host's links join none. Each
// domain lists its GPUs in the order given, the domains in the order of
// their first GPU.
func NVLinkDomains(m *sim.Machine, gpus []int) [][]int {
	joined := newSets(len(m.Nodes))
	fabric := func(n int) bool { k := m.Nodes[n].Kind; return k == sim.NodeGPU || k == sim.NodeSwitch }
	for _, l := range m.Links {
		if l.Kind == sim.LinkNVLink && fabric(l.A) && fabric(l.B) {
			joined.join(l.A, l.B)
		}
	}
	var out [][]int
	at := map[int]int{} // a domain's root -> its index in out
	for _, g := range gpus {
		r := joined.find(m.GPUs[g].Node)
		i, ok := at[r]
		if !ok {
			i = len(out)
			at[r] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], g)
	}
	return out
}

// MultiNodeWarning is a warning about a collective over gpus that spans
// two or more NVLink domains of two GPUs or more each in different nodes
// (hosts not joined by inter-socket links), or "": gpusim plans it as
// within one node, while NCCL runs it across the network with rings and
// trees of its own (not modelled). GPUs without NVLink (a PCIe box) are
// each a domain of one, and domains of one node (bridged pairs on one
// socket or two) are not warned of.
func MultiNodeWarning(m *sim.Machine, gpus []int) string {
	// A node is the hosts (sockets) joined by inter-socket links: two
	// sockets of one box are one node.
	hosts := newSets(len(m.Hosts))
	for _, l := range m.Links {
		a, b := m.Nodes[l.A], m.Nodes[l.B]
		if l.Kind == sim.LinkSocket && a.Kind == sim.NodeHost && b.Kind == sim.NodeHost {
			hosts.join(a.Index, b.Index)
		}
	}
	var sizes []string
	var nodes []map[int]bool // each domain's nodes
	for _, d := range NVLinkDomains(m, gpus) {
		if len(d) < 2 {
			continue
		}
		sizes = append(sizes, strconv.Itoa(len(d)))
		ns := map[int]bool{}
		for _, g := range d {
			ns[hosts.find(m.GPUs[g].Host)] = true
		}
		nodes = append(nodes, ns)
	}
	// Warned of where two domains are in different nodes (no node in
	// common): one box's bridged pairs, on one socket or two, are not.
	apart := false
	for i := range nodes {
		for j := range i {
			shared := false
			for n := range nodes[i] {
				shared = shared || nodes[j][n]
			}
			apart = apart || !shared
		}
	}
	if !apart {
		return ""
	}
	return fmt.Sprintf("a collective over %d GPUs spans %d NVLink domains (of %s GPUs): gpusim plans it as within one node (NCCL's intra-node rings, trees and latencies), not as NCCL runs collectives across nodes over the network, which it does not model; take its time as a rough bound", len(gpus), len(sizes), strings.Join(sizes, ", "))
}

// sets are disjoint sets of 0..n-1 (union-find with path halving).
type sets []int

func newSets(n int) sets {
	s := make(sets, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// find returns x's set's representative.
func (s sets) find(x int) int {
	for s[x] != x {
		s[x] = s[s[x]]
		x = s[x]
	}
	return x
}

// join merges a's and b's sets.
func (s sets) join(a, b int) { s[s.find(a)] = s.find(b) }

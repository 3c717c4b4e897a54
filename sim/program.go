package sim

import (
	"fmt"
	"hash/maphash"
	"math"
	"sort"
	"strings"
)

// OpKind is the kind of one operation of a host thread.
type OpKind uint8

// Op kinds.
const (
	OpKernel      OpKind = iota // a kernel launch on a stream
	OpCopy                      // a memcpy on a stream
	OpEventRecord               // cudaEventRecord
	OpEventWait                 // cudaStreamWaitEvent
	OpSync                      // cudaStreamSynchronize, cudaEventSynchronize, cudaDeviceSynchronize
	OpHost                      // CPU work of the thread
	OpSignal                    // post to a host semaphore
	OpAwait                     // take from a host semaphore, blocking while it is zero
	OpCollective                // a collective over several GPUs: a part on a stream of each
)

var opKindNames = [...]string{"kernel", "copy", "record", "wait", "sync", "host", "signal", "await", "collective"}

func (k OpKind) String() string {
	if int(k) < len(opKindNames) {
		return opKindNames[k]
	}
	return fmt.Sprintf("OpKind(%d)", uint8(k))
}

// OnStream reports whether ops of this kind are enqueued on a stream (a
// collective has a part on a stream of each of its GPUs).
func (k OpKind) OnStream() bool { return k <= OpEventWait || k == OpCollective }

// MemoryKind is the kind of host memory a copy reads or writes.
type MemoryKind uint8

// Memory kinds.
const (
	Pinned   MemoryKind = iota // page-locked: DMA reads and writes it directly
	Pageable                   // ordinary memory: staged through a pinned bounce buffer
)

func (k MemoryKind) String() string {
	if k == Pageable {
		return "pageable"
	}
	return "pinned"
}

// SyncKind is what a sync op waits for.
type SyncKind uint8

// Sync kinds.
const (
	SyncStream SyncKind = iota // all work issued to one stream so far
	SyncEvent                  // the most recent record of an event
	SyncDevice                 // all work issued to every stream of one GPU so far
)

// Op is one operation in a host thread's program.
type Op struct {
	Kind OpKind
	// (The one-byte fields come together, so that an op is 168 bytes, not
	// 200: a run holds every op of its program.)
	//
	// Sync says what a sync waits for.
	Sync SyncKind
	// Memory is the kind of host memory of a copy to or from a host.
	Memory MemoryKind
	// NoPeerAccess makes a GPU-to-GPU copy go through host memory even where
	// P2P is possible, as cudaMemcpyPeer does when peer access is not enabled.
	NoPeerAccess bool
	// OneRank: see Coll.
	OneRank bool
	// MemoryBound marks a kernel whose Duration its memory traffic sets,
	// not its FLOPs (the roofline's memory side; set by whoever computed
	// Duration from both): the critical path calls it memory-bound.
	MemoryBound bool
	// Comm is a collective's communicator: 0 for the one of its GPUs (every
	// collective over the same set of GPUs, in whatever order, shares it),
	// k > 0 for Program.Comms[k-1]. A communicator runs its collectives
	// on each GPU one after another, in the order they are issued there,
	// whatever streams they are on (as NCCL orders the kernels of one
	// communicator). 16 bits, so that it fits beside the one-byte fields.
	Comm int16
	// ID names the op in results; unique within a program.
	ID string
	// Where is the op's origin for messages ("file:line:col"); may be empty.
	Where string
	// Stream is the index into Program.Streams for kernel, copy, record, wait
	// and stream syncs.
	Stream int
	// Event is the index into Program.Events for record, wait and event syncs.
	Event int
	// GPU is the index into Machine.GPUs for device syncs.
	GPU int
	// Sem is the index into Program.Semaphores for signal and await; Count is
	// how much a signal adds (at least 1).
	Sem, Count int
	// Duration is a kernel's run time when it has the SMs it claims, or a host
	// op's CPU time on one core.
	Duration Time
	// SMShare is the fraction of the GPU's SMs a kernel claims, in (0, 1].
	SMShare float64
	// Src and Dst are the node indices a copy reads and writes (a host or a GPU).
	Src, Dst int
	// Bytes is a copy's size; for a kernel that the scenario gave as memory
	// traffic alone (bytes, no flops: the roofline's memory-bound kernel),
	// that traffic, which the hw backend may move with a memory kernel
	// rather than spin for Duration; 0 for kernels given otherwise. The
	// engine times kernels by Duration alone.
	Bytes int64
	// GraphOps, on the first op of a CUDA graph instance, is the number of
	// ops in it (this one and the ones after it on the thread): one launch
	// costing the host's GraphLaunch issues them all. Graphs hold kernels,
	// pinned copies, records, waits and collectives.
	GraphOps int
	// Coll is a collective's plan; Streams has one stream per rank (Stream
	// is Streams[0]). With OneRank the op issues only rank Rank's part: the
	// parts of one collective issued by several ops (one per rank, as the
	// processes of a communicator call NCCL) meet by ID.
	Coll    *CollPlan
	Streams []int
	Rank    int
}

// CollPlan is a collective expanded into transfers among its ranks, the way a
// collective library runs it (models builds plans; the engine runs them).
//
// Each rank's part is an op on its stream. A part starts when it reaches the
// head of its stream and holds SMShare of its GPU's SMs from then until it
// ends; the transfers begin StartDelay after every rank's part has started;
// a rank's part ends when its last transfer (sent or received) ends.
type CollPlan struct {
	// Name is the collective ("allreduce", ...); Algorithm and Protocol say
	// how it runs; Bytes is the size in nccl-tests' sense; for display.
	Name, Algorithm, Protocol string
	Bytes                     int64
	// Ranks is the GPU (index into Machine.GPUs) of each rank.
	Ranks []int
	// SMShare is the fraction of each GPU's SMs the collective's kernel
	// claims while it runs, in (0, 1].
	SMShare float64
	// StartDelay is the fixed latency before the first transfer.
	StartDelay Time
	// Tasks are the transfers. A plan without any is a call NCCL discards
	// (an empty one, or one rank in place): its call launches nothing, and
	// each rank's part ends as it reaches the head of its stream, without
	// waiting for the other ranks or its communicator.
	Tasks []CollTask
}

// CollTask is one transfer of a collective plan.
type CollTask struct {
	// From and To are ranks; -1 means the switch Switch (a node index), for
	// in-switch reductions (NVLink SHARP).
	From, To int
	Switch   int
	// Bytes is the data moved.
	Bytes float64
	// Wire is the bytes put on each link per data byte (protocol overhead),
	// at least 1. Links carry kernel-driven transfers at their SMBandwidth.
	Wire float64
	// Crossing, where set (1 to Wire), is what of Wire crosses each link
	// per data byte: the rest is an efficiency, link capacity the transfer
	// takes without bytes for it (NVLS's), left out of the links' bytes.
	// Zero means all of Wire crosses (a protocol's flags and data).
	Crossing float64
	// Bound caps the data rate, bytes/s (protocol limits); +Inf for none.
	Bound float64
	// Delay is fixed time before the bytes flow (the step's latency).
	Delay Time
	// Reduce makes the receiving GPU read and write its memory for each
	// byte (the reduction's compute).
	Reduce bool
	// Deps are tasks that must end before this one starts.
	Deps []int
}

// IsJoin reports whether t is a join: From, To and Switch all -1, no
// bytes, no delay: a task that ends as soon as its dependencies have ended,
// in the event of the last, so that many tasks may depend on many through
// it (n+n dependencies instead of n*n).
func (t *CollTask) IsJoin() bool {
	return t.From == -1 && t.To == -1 && t.Switch == -1 && t.Bytes == 0 && t.Delay == 0
}

// Stream is a CUDA stream of one GPU; its name is "GPU/NAME".
type Stream struct {
	GPU  int // index into Machine.GPUs
	Name string
}

// Semaphore is a counting semaphore between host threads.
type Semaphore struct {
	Name    string
	Initial int
	// Input marks a queue of input batches (a data loader's): a GPU idle
	// while the thread that feeds it awaits this semaphore is waiting on input.
	Input bool
}

// Thread is a host thread and its ops, run in program order.
type Thread struct {
	Name string
	Host int // index into Machine.Hosts
	Ops  []Op
}

// Program is a workload: host threads and the streams, events and semaphores
// their ops name.
type Program struct {
	Name       string
	Threads    []Thread
	Streams    []Stream
	Events     []string
	Semaphores []Semaphore
	// Comms names the communicators collectives name (Op.Comm).
	Comms []string
	// Warnings are what the program's builder noticed about it (a training
	// that would not fit in GPU memory); a run reports them first.
	Warnings []string
	// Work is what the program achieves, where its builder knows it (a
	// training's samples and model FLOPs); nil otherwise.
	Work *Work
	// Vars are the values of the vars the program was built with (a
	// scenario's, after --set), in the file's order; for display only.
	Vars []Var
}

// Var is a named value a program was built with.
type Var struct{ Name, Value string }

// Work is the useful work of a program, from which results state
// throughput and model FLOPs utilization.
type Work struct {
	// Kind is "inference" for a generation (Steps are its tokens, Samples
	// its sequences, Tokens those generated); "" for a training.
	Kind    string
	Steps   int
	Samples float64 // over the run
	Tokens  float64 // over the run; 0 where tokens do not apply
	// ModelFLOPs is the model's FLOPs over the run: its forward and
	// backward passes, 3 x the forward's, without recomputation (PaLM's
	// MFU, Chowdhery et al. 2022, Appendix B).
	ModelFLOPs float64
	// PeakFLOPs is the GPUs' peak FLOP/s in DType, summed (datasheets,
	// dense); 0 if one has no such rate.
	PeakFLOPs float64
	DType     string
	GPUs      int
	// FirstToken and LastToken are, for a generation, the ids of the ops
	// after which its first and last tokens are on the host.
	FirstToken, LastToken string
}

// TokenTimes returns a generation's time to its first token and the time
// a token after it (the mean over the others; 0 for one token); false for
// a run without them.
func (r *Result) TokenTimes() (first, per Time, ok bool) {
	w := r.Program.Work
	if w == nil || w.Kind != "inference" || w.FirstToken == "" {
		return 0, 0, false
	}
	firstEnd, lastEnd := Time(-1), Time(-1)
	for i := range r.Ops {
		if r.Ops[i].Unfinished { // a deadlock left it: the token never came
			continue
		}
		switch r.Ops[i].ID {
		case w.FirstToken:
			firstEnd = r.Ops[i].End
		case w.LastToken:
			lastEnd = r.Ops[i].End
		}
	}
	if w.LastToken == w.FirstToken {
		lastEnd = firstEnd
	}
	if firstEnd < 0 || lastEnd < 0 {
		return 0, 0, false
	}
	if w.Steps > 1 {
		per = (lastEnd - firstEnd) / Time(w.Steps-1)
	}
	return firstEnd, per, true
}

// MFU is the model FLOPs utilization of a run of the given makespan:
// ModelFLOPs / (makespan x PeakFLOPs); false without a peak or a time.
func (w *Work) MFU(makespan Time) (float64, bool) {
	if w == nil || w.PeakFLOPs <= 0 || makespan <= 0 || w.ModelFLOPs <= 0 {
		return 0, false
	}
	return w.ModelFLOPs / (makespan.Seconds() * w.PeakFLOPs), true
}

// NumOps returns the number of ops in all threads.
func (p *Program) NumOps() int {
	n := 0
	for _, t := range p.Threads {
		n += len(t.Ops)
	}
	return n
}

// NumRecords is the number of records a run of p keeps (Result.Ops): one
// an op, and one for each GPU's part of a collective issued for all its
// ranks at once.
func (p *Program) NumRecords() int {
	n := 0
	for _, t := range p.Threads {
		n += len(t.Ops)
		for i := range t.Ops {
			if op := &t.Ops[i]; op.Kind == OpCollective && !op.OneRank && op.Coll != nil && len(op.Coll.Ranks) > 1 {
				n += len(op.Coll.Ranks) - 1
			}
		}
	}
	return n
}

// Validate checks p against m and reports its problems, naming each op: the
// first maxProblems, a line each, then how many more there are.
func (p *Program) Validate(m *Machine) error { return p.validate(m, newRouteTrees(m)) }

// maxProblems is the most problems an invalid program's error lists: a
// program generated wrong can have one for each of its million ops.
const maxProblems = 50

// validate is Validate with the route searches kept in trees, which a run
// goes on using.
func (p *Program) validate(m *Machine, trees *routeTrees) error {
	var errs []string
	more := 0
	add := func(op *Op, format string, a ...any) {
		if len(errs) == maxProblems {
			more++
			return
		}
		msg := fmt.Sprintf(format, a...)
		if op != nil {
			msg = fmt.Sprintf("op %s: %s", op.ID, msg)
			if op.Where != "" {
				msg = op.Where + ": " + msg
			}
		}
		errs = append(errs, msg)
	}
	for _, s := range p.Streams {
		if s.GPU < 0 || s.GPU >= len(m.GPUs) {
			add(nil, "stream %s: gpu index %d out of range", s.Name, s.GPU)
		}
	}
	ids := newIDTable(p)
	reach := newReachCache(m, trees)
	pos := 0 // the op's position in all threads' ops
	for ti := range p.Threads {
		t := &p.Threads[ti]
		for oi := 0; oi < len(t.Ops); oi++ {
			op := &t.Ops[oi]
			if op.GraphOps < 0 || op.GraphOps > len(t.Ops)-oi {
				add(op, "graph of %d ops runs past the thread's end", op.GraphOps)
				continue
			}
			for k := oi; k < oi+op.GraphOps; k++ {
				g := &t.Ops[k]
				if !g.Kind.OnStream() || (g.Kind == OpCopy && g.Memory == Pageable) || (k > oi && g.GraphOps != 0) {
					add(g, "a CUDA graph holds kernels, pinned copies, records, waits and collectives only")
				}
			}
		}
		if t.Host < 0 || t.Host >= len(m.Hosts) {
			add(nil, "thread %s: host index %d out of range", t.Name, t.Host)
		}
		for oi := range t.Ops {
			op := &t.Ops[oi]
			if dup := ids.add(op, pos); op.ID == "" {
				add(op, "has no id")
			} else if dup {
				add(op, "duplicate id")
			}
			pos++
			if (op.Kind.OnStream() && op.Kind != OpCollective) || (op.Kind == OpSync && op.Sync == SyncStream) {
				if op.Stream < 0 || op.Stream >= len(p.Streams) {
					add(op, "stream index %d out of range", op.Stream)
					continue
				}
			}
			switch op.Kind {
			case OpEventRecord, OpEventWait:
				if op.Event < 0 || op.Event >= len(p.Events) {
					add(op, "event index %d out of range", op.Event)
				}
			case OpSync:
				switch op.Sync {
				case SyncEvent:
					if op.Event < 0 || op.Event >= len(p.Events) {
						add(op, "event index %d out of range", op.Event)
					}
				case SyncDevice:
					if op.GPU < 0 || op.GPU >= len(m.GPUs) {
						add(op, "gpu index %d out of range", op.GPU)
					}
				}
			case OpKernel:
				if op.Duration < 0 {
					add(op, "negative duration")
				}
				if !(op.SMShare > 0 && op.SMShare <= 1) {
					add(op, "sm share %g is not in (0, 1]", op.SMShare)
				}
				if op.Bytes < 0 {
					add(op, "negative memory traffic")
				}
			case OpHost:
				if op.Duration < 0 {
					add(op, "negative duration")
				}
			case OpSignal, OpAwait:
				if op.Sem < 0 || op.Sem >= len(p.Semaphores) {
					add(op, "semaphore index %d out of range", op.Sem)
				}
				if op.Kind == OpSignal && op.Count < 1 {
					add(op, "signal count %d is less than 1", op.Count)
				}
			case OpCopy:
				if msg := p.checkCopy(m, op, reach); msg != "" {
					add(op, "%s", msg)
				}
			case OpCollective:
				if msg := p.checkCollective(m, op, reach); msg != "" {
					add(op, "%s", msg)
				}
			}
		}
	}
	if more > 0 {
		what := "problems"
		if more == 1 {
			what = "problem"
		}
		errs = append(errs, fmt.Sprintf("and %d more %s", more, what))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

// idTable finds, op by op in program order, the ops whose ID an earlier op
// has (the parts of a collective issued rank by rank share an ID and differ
// by rank). It keeps a flat open-addressing table of hash fragments and
// positions instead of a map of every ID (at a million ops the map's
// inserts cost over half a second, most of it cache misses), and compares
// IDs only where fragments match. Validation feeds it each thread's ops
// while they are in cache for the other checks: a pass of its own over
// every op cost as much again in misses.
type idTable struct {
	p    *Program
	seed maphash.Seed
	// table holds, for each ID seen, the high 32 bits of its hash and 1
	// plus the position of its first op; 0 marks a free entry. Its index
	// comes from the hash's low bits (linear probing).
	table []uint64
	mask  uint64
	ends  []int // the position after each thread's last op
}

type idKey struct {
	id      string
	oneRank bool
	rank    int
}

func keyOf(op *Op) idKey {
	if op.Kind == OpCollective && op.OneRank {
		return idKey{op.ID, true, op.Rank}
	}
	return idKey{id: op.ID}
}

func newIDTable(p *Program) *idTable {
	t := &idTable{p: p, seed: maphash.MakeSeed()} // the seed only moves the cost of false matches
	n := 0
	for ti := range p.Threads {
		n += len(p.Threads[ti].Ops)
		t.ends = append(t.ends, n)
	}
	size := 1
	for size < 2*n {
		size *= 2
	}
	t.table = make([]uint64, size)
	t.mask = uint64(size - 1)
	return t
}

// add records op, at position pos (ops must come in program order), and
// reports whether an earlier op has its ID.
func (t *idTable) add(op *Op, pos int) bool {
	k := keyOf(op)
	h := maphash.String(t.seed, k.id)
	if k.oneRank {
		h = (h ^ uint64(k.rank+1)) * 0x9e3779b97f4a7c15
	}
	frag := h >> 32
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		e := t.table[i]
		if e == 0 {
			t.table[i] = frag<<32 | uint64(pos+1)
			return false
		}
		if e>>32 == frag && keyOf(t.op(int(e&0xffffffff)-1)) == k {
			return true
		}
	}
}

// op returns the op at position pos.
func (t *idTable) op(pos int) *Op {
	ti := sort.SearchInts(t.ends, pos+1)
	start := 0
	if ti > 0 {
		start = t.ends[ti-1]
	}
	return &t.p.Threads[ti].Ops[pos-start]
}

// reachCache remembers, for one validation, which pairs of nodes can reach
// each other, so that a program of a million copies or collectives between
// the same few GPUs looks each route up once.
type reachCache struct {
	m     *Machine
	trees *routeTrees
	route map[[2]int]bool
	path  map[[3]int]bool // {kind, a, b}: 0 PathBetween, 1 CollectivePath, 2 StagedPath
	plans map[*CollPlan]string
}

func newReachCache(m *Machine, trees *routeTrees) *reachCache {
	return &reachCache{m: m, trees: trees, route: map[[2]int]bool{}, path: map[[3]int]bool{}, plans: map[*CollPlan]string{}}
}

func (c *reachCache) routes(a, b int) bool {
	k := [2]int{a, b}
	ok, seen := c.route[k]
	if !seen {
		_, ok = c.trees.route(a, b)
		c.route[k] = ok
	}
	return ok
}

func (c *reachCache) gpuPath(collective bool, a, b int) bool {
	k := [3]int{0, a, b}
	if collective {
		k[0] = 1
	}
	ok, seen := c.path[k]
	if !seen {
		if collective {
			ok = c.m.collectivePath(c.trees, a, b).Kind != PathNone
		} else {
			ok = c.m.pathBetween(c.trees, a, b).Kind != PathNone
		}
		c.path[k] = ok
	}
	return ok
}

func (p *Program) checkCopy(m *Machine, op *Op, reach *reachCache) string {
	if op.Bytes < 0 {
		return "negative size"
	}
	if op.Src < 0 || op.Src >= len(m.Nodes) || op.Dst < 0 || op.Dst >= len(m.Nodes) {
		return "copy end out of range"
	}
	s, d := m.Nodes[op.Src], m.Nodes[op.Dst]
	if s.Kind == NodeSwitch || d.Kind == NodeSwitch {
		return "a copy's ends must be hosts or GPUs"
	}
	if s.Kind == NodeHost && d.Kind == NodeHost {
		return "a copy between two hosts is CPU work: use a host op"
	}
	g := p.Streams[op.Stream].GPU
	gn := m.GPUs[g].Node
	if gn != op.Src && gn != op.Dst {
		return fmt.Sprintf("stream %s belongs to %s, which is neither end of the copy", p.StreamName(m, op.Stream), m.GPUs[g].Name)
	}
	switch {
	case s.Kind == NodeHost:
		if !reach.routes(op.Src, op.Dst) {
			return fmt.Sprintf("no route from %s to %s", s.Name, d.Name)
		}
	case d.Kind == NodeHost:
		if !reach.routes(op.Src, op.Dst) {
			return fmt.Sprintf("no route from %s to %s", s.Name, d.Name)
		}
	default:
		if !reach.gpuPath(false, s.Index, d.Index) {
			return fmt.Sprintf("no path from %s to %s", s.Name, d.Name)
		}
		if op.NoPeerAccess && !reach.stagedPath(s.Index, d.Index) {
			return fmt.Sprintf("no peer access, and no host reachable from both %s and %s to stage the copy through", s.Name, d.Name)
		}
	}
	return ""
}

func (c *reachCache) stagedPath(a, b int) bool {
	k := [3]int{2, a, b}
	ok, seen := c.path[k]
	if !seen {
		ok = c.m.stagedPath(c.trees, a, b).Kind != PathNone
		c.path[k] = ok
	}
	return ok
}

func (p *Program) checkCollective(m *Machine, op *Op, reach *reachCache) string {
	c := op.Coll
	if c == nil {
		return "collective without a plan"
	}
	if len(c.Ranks) == 0 || len(op.Streams) != len(c.Ranks) {
		return "a collective needs one stream per rank"
	}
	if op.OneRank && (op.Rank < 0 || op.Rank >= len(c.Ranks)) {
		return fmt.Sprintf("rank %d out of range", op.Rank)
	}
	if op.Comm < 0 || int(op.Comm) > len(p.Comms) {
		return fmt.Sprintf("communicator %d out of range (%d named)", op.Comm, len(p.Comms))
	}
	if !(c.SMShare > 0 && c.SMShare <= 1) {
		return fmt.Sprintf("sm share %g is not in (0, 1]", c.SMShare)
	}
	seen := map[int]bool{}
	for i, g := range c.Ranks {
		if g < 0 || g >= len(m.GPUs) {
			return fmt.Sprintf("rank %d: gpu index %d out of range", i, g)
		}
		if seen[g] {
			return fmt.Sprintf("%s appears twice among the ranks", m.GPUs[g].Name)
		}
		seen[g] = true
		s := op.Streams[i]
		if s < 0 || s >= len(p.Streams) || p.Streams[s].GPU != g {
			return fmt.Sprintf("rank %d: its stream is not a stream of %s", i, m.GPUs[g].Name)
		}
	}
	if msg, ok := reach.plans[c]; ok {
		return msg // a plan shared by many ops is checked once
	}
	msg := p.checkPlan(m, c, reach)
	reach.plans[c] = msg
	return msg
}

// checkPlan checks a collective's tasks.
func (p *Program) checkPlan(m *Machine, c *CollPlan, reach *reachCache) string {
	pairs := map[[2]int]bool{}
	for i, t := range c.Tasks {
		if t.IsJoin() {
			if msg := laterDep(t, i); msg != "" {
				return msg
			}
			continue
		}
		if t.From < -1 || t.From >= len(c.Ranks) || t.To < -1 || t.To >= len(c.Ranks) || (t.From < 0 && t.To < 0) {
			return fmt.Sprintf("task %d: bad ranks %d -> %d", i, t.From, t.To)
		}
		if (t.From < 0 || t.To < 0) && (t.Switch < 0 || t.Switch >= len(m.Nodes) || m.Nodes[t.Switch].Kind != NodeSwitch) {
			return fmt.Sprintf("task %d: a transfer to or from a switch needs a switch", i)
		}
		if t.From >= 0 && t.To >= 0 && t.From != t.To && !pairs[[2]int{t.From, t.To}] {
			pairs[[2]int{t.From, t.To}] = true
			if !reach.gpuPath(true, c.Ranks[t.From], c.Ranks[t.To]) {
				return fmt.Sprintf("%s and %s cannot reach each other", m.GPUs[c.Ranks[t.From]].Name, m.GPUs[c.Ranks[t.To]].Name)
			}
		}
		if t.From < 0 || t.To < 0 {
			g := t.From
			if g < 0 {
				g = t.To
			}
			if !reach.routes(m.GPUs[c.Ranks[g]].Node, t.Switch) {
				return fmt.Sprintf("%s cannot reach switch %s", m.GPUs[c.Ranks[g]].Name, m.Nodes[t.Switch].Name)
			}
		}
		switch {
		case !(t.Bytes >= 0) || math.IsInf(t.Bytes, 1):
			return fmt.Sprintf("task %d: bytes %g; want a finite number, 0 or more", i, t.Bytes)
		case !(t.Wire >= 1) || math.IsInf(t.Wire, 1):
			return fmt.Sprintf("task %d: wire %g; want a finite factor of at least 1", i, t.Wire)
		case t.Crossing != 0 && !(t.Crossing >= 1 && t.Crossing <= t.Wire):
			return fmt.Sprintf("task %d: crossing %g; want 0 (all of wire) or from 1 to wire (%g)", i, t.Crossing, t.Wire)
		case !(t.Bound > 0):
			return fmt.Sprintf("task %d: bound %g; want a positive rate, or +Inf for none", i, t.Bound)
		case t.Delay < 0:
			return fmt.Sprintf("task %d: delay %d; want 0 or more", i, t.Delay)
		}
		if msg := laterDep(t, i); msg != "" {
			return msg
		}
	}
	return ""
}

// laterDep says which of task i's dependencies is not an earlier task, ""
// if none.
func laterDep(t CollTask, i int) string {
	for _, d := range t.Deps {
		if d < 0 || d >= i {
			return fmt.Sprintf("task %d: dependency %d is not an earlier task", i, d)
		}
	}
	return ""
}

// StreamName returns the stream's user-facing name, "gpu0/compute".
func (p *Program) StreamName(m *Machine, s int) string {
	st := p.Streams[s]
	return m.GPUs[st.GPU].Name + "/" + st.Name
}

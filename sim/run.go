package sim

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// DeadlockError reports work that can never finish: the event queue ran dry
// while threads or streams still had ops pending. Stuck names each of them and
// what it waits for.
type DeadlockError struct {
	// Where is the position ("file:line:col") of the first stuck op, if known.
	Where string
	Stuck []string
}

func (e *DeadlockError) Error() string {
	msg := "deadlock: work can never finish: " + strings.Join(e.Stuck, "; ")
	if e.Where != "" {
		msg = e.Where + ": " + msg
	}
	return msg
}

// Run simulates program p on machine m. The result depends only on m and p.
// It returns an error for invalid input, for time overflow and for deadlock;
// on deadlock the partial result is returned too.
func Run(m *Machine, p *Program) (*Result, error) {
	return runWith(m, p, runOptions{})
}

// Options leave out optional work of a run.
type Options struct {
	// NoLoadSeries leaves ResourceStats.Series empty: the load of every link
	// and memory over time, which traces and plots draw and nothing else
	// reads. A run of many transfers records a point per changed resource
	// per solve, most of its memory (1.2 of 1.4 GB on 20,000 transfers).
	NoLoadSeries bool
	// CollLinks records Result.CollLinks and Result.CopyLegs: when each
	// collective used each link direction, and when each leg of a
	// two-stage copy moved its bytes, which traces draw. It costs about 6%
	// more instructions on a run of many collectives, so it is asked for.
	CollLinks bool
	// Progress, where set, is called every million events or so with the
	// simulated time and the events so far (a long run's progress line).
	Progress func(simulated Time, events uint64)
}

// RunOptions is Run with opt; every other result is the same as Run's.
func RunOptions(m *Machine, p *Program, opt Options) (*Result, error) {
	return runWith(m, p, runOptions{noSeries: opt.NoLoadSeries, collLinks: opt.CollLinks, progress: opt.Progress})
}

// runOptions are Options and knobs for the package's own tests.
type runOptions struct {
	noSeries, collLinks bool
	progress            func(Time, uint64)
	// oversubscribe breaks the flow solver on purpose (rates 1.5x what the
	// resources allow), so that tests can show their checks catch it.
	oversubscribe bool
	// noReuse allocates every op's state anew instead of reusing finished
	// ones, so that tests can show reuse changes nothing.
	noReuse bool
	// chunkByChunk moves every staged copy chunk by chunk, however long
	// (no coalescing: see copy.go), so that tests can compare the two.
	chunkByChunk bool
	// allGlobal makes every solve but the first of each run of them
	// re-solve every flow at L0 or above (the solver's visitAll), however
	// small the machine, so that tests can check that mode's results.
	allGlobal bool
	// around, when set, is called with the event loop to run it, so that
	// the engine's benchmark can time the loop alone (validation before it
	// and the analysis after it are not the engine).
	around func(loop func())
}

func runWith(m *Machine, p *Program, opt runOptions) (*Result, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	trees := newRouteTrees(m)
	if err := p.validate(m, trees); err != nil {
		return nil, err
	}
	r := newRun(m, p, trees, !opt.noSeries)
	r.s.oversubscribe = opt.oversubscribe
	if opt.allGlobal {
		r.s.globalAt, r.s.globalMin = 0, 0
	}
	r.noReuse = opt.noReuse
	r.chunkByChunk = opt.chunkByChunk
	r.spans = opt.collLinks
	r.e.progress = opt.progress
	if opt.around != nil {
		opt.around(r.e.run)
	} else {
		r.e.run()
	}
	if r.e.err != nil {
		if oe, ok := r.e.err.(*OverflowError); ok {
			r.blame(oe)
		}
		return nil, r.e.err
	}
	res := r.finish()
	if where, stuck := r.stuck(); len(stuck) > 0 {
		return res, &DeadlockError{Where: where, Stuck: stuck}
	}
	return res, nil
}

type run struct {
	e   engine
	s   *solver
	m   *Machine
	p   *Program
	res *Result

	threads []*threadState
	streams []*streamState
	// eventRec is the record of each event's latest issued record op (-1
	// for none), and eventOp that op while it has not ended.
	eventRec []int
	eventOp  []*opState
	// freeOps holds the states of ended ops, for reuse (see finish), and
	// freeRuns the runs of ended collective tasks.
	freeOps  []*opState
	freeRuns []*taskRun
	noReuse  bool
	// chunkByChunk: see runOptions.
	chunkByChunk bool
	sems         []semState
	// w holds the warnings: the program's, then the run's.
	w     warnings
	gpus  []*gpuState
	hosts []hostState
	// routes and paths cache Machine.Route and Machine.PathBetween (and,
	// under negated indices, the staged path copyPath takes) for this
	// run (the Machine itself is never written, so runs may share it);
	// trees holds the route searches, from the validation on.
	routes map[[2]int]Route
	trees  *routeTrees
	paths  map[[2]int]GPUPath
	// colls holds the collectives whose ranks have not all arrived, by op ID.
	colls map[string]*collState
	// plans holds what the run derives once from each collective plan.
	plans map[*CollPlan]*planState
	// Communicators: the ids of the unnamed ones (one per set of GPUs,
	// after Program.Comms), by their sorted GPUs, and their GPUs; for each
	// communicator and GPU, the record of the last part issued there and
	// its state (valid while that record has not ended). A map: a program
	// of all-pairs sends has a communicator per pair, and a table of every
	// communicator by every GPU would grow as their product.
	commIDs  map[string]int
	commSets [][]int
	commLast map[[2]int32]commPart
	// duplex is, per link, the resource of its joint limit on both
	// directions, or -1; nil when no link has one.
	duplex []int32
	// duplexLink is the link of each joint limit's resource, which are
	// resources duplexFirst, duplexFirst+1, ... in link order.
	duplexLink  []int32
	duplexFirst int32
	// spans: record Result.CollLinks (Options.CollLinks).
	spans bool
	// excess is, per resource, what kernel-driven transfers loaded on it
	// beyond their bytes (a link carries them at its SMBandwidth: they
	// load it Bandwidth/SMBandwidth per byte); nil until one ends.
	excess []float64
}

// linkOf returns the link whose direction or joint limit resource res is,
// or -1.
func (r *run) linkOf(res int32) int {
	if int(res) < 2*len(r.m.Links) {
		return int(res) / 2
	}
	if k := int(res - r.duplexFirst); len(r.duplexLink) > 0 && k >= 0 && k < len(r.duplexLink) {
		return int(r.duplexLink[k])
	}
	return -1
}

func (r *run) route(a, b int) Route {
	k := [2]int{a, b}
	rt, ok := r.routes[k]
	if !ok {
		rt, _ = r.trees.route(a, b)
		r.routes[k] = rt
	}
	return rt
}

func (r *run) collPath(a, b int) GPUPath {
	k := [2]int{-1 - a, b}
	p, ok := r.paths[k]
	if !ok {
		p = r.m.collectivePath(r.trees, a, b)
		r.paths[k] = p
	}
	return p
}

// copyPath is the path a copy between two GPUs takes (a copy that asks for
// no peer access is staged where peer access would be used); for copies
// with a host end, the zero GPUPath.
func (r *run) copyPath(op *Op) GPUPath {
	src, dst := r.m.Nodes[op.Src], r.m.Nodes[op.Dst]
	if src.Kind == NodeHost || dst.Kind == NodeHost {
		return GPUPath{}
	}
	p := r.path(src.Index, dst.Index)
	if op.NoPeerAccess && (p.Kind == PathNVLink || p.Kind == PathP2P) {
		// Cached under the negated pair: the call and the copy both ask.
		k := [2]int{-1 - src.Index, -1 - dst.Index}
		sp, ok := r.paths[k]
		if !ok {
			sp = r.m.stagedPath(r.trees, src.Index, dst.Index)
			r.paths[k] = sp
		}
		p = sp
	}
	return p
}

func (r *run) path(a, b int) GPUPath {
	k := [2]int{a, b}
	p, ok := r.paths[k]
	if !ok {
		p = r.m.pathBetween(r.trees, a, b)
		r.paths[k] = p
	}
	return p
}

type hostState struct {
	cpu    group // the cores, processor-shared by threads doing CPU work
	memRes int
}

type semState struct {
	count   int
	waiters []*threadState
	last    int // record of the latest signal
}

type gpuState struct {
	r       *run
	idx     int
	claims  float64      // sum of the SM claims of running kernels and collective parts
	colls   []*collState // collectives with a part resident on this GPU
	smRes   int
	memRes  int
	ces     []*opState // holder of each copy engine
	ceSince []Time
	ceBusy  []Time
	ceQueue []*opState
	ceFree  int // engines nobody holds
	// fed: some op of the program is issued to a stream of this GPU;
	// syncWarned: a device sync on it, when none is, was warned of.
	fed, syncWarned bool
	ceHeld          [2]int // engines held by copies into the GPU and out of it
}

func newRun(m *Machine, p *Program, trees *routeTrees, series bool) *run {
	r := &run{m: m, p: p, res: &Result{Machine: m, Program: p}, trees: trees,
		w: newWarnings(p.Warnings)}
	r.s = newSolver(&r.e)
	// Every resource below, joint limits at most one a link: one
	// allocation each, not a slice grown by doubling.
	most := 3*len(m.Links) + len(m.Hosts) + 2*len(m.GPUs)
	r.s.res, r.s.fs = make([]resource, 0, most), make([]fillState, 0, most)
	for _, l := range m.Links {
		r.s.addResource(l.Name+" "+m.Nodes[l.A].Name+"->"+m.Nodes[l.B].Name, l.Bandwidth, series)
		r.s.addResource(l.Name+" "+m.Nodes[l.B].Name+"->"+m.Nodes[l.A].Name, l.Bandwidth, series)
	}
	for _, h := range m.Hosts {
		hs := hostState{cpu: group{cores: h.Cores}}
		hs.memRes = r.s.addResource(h.Name+"/memory", h.MemoryBandwidth, series)
		r.hosts = append(r.hosts, hs)
	}
	for i, g := range m.GPUs {
		gs := &gpuState{r: r, idx: i}
		gs.smRes = r.s.addResource(g.Name+"/sms", 1, false)
		gs.memRes = r.s.addResource(g.Name+"/memory", g.MemoryBandwidth, series)
		gs.ces = make([]*opState, g.CopyEngines)
		gs.ceSince = make([]Time, g.CopyEngines)
		gs.ceBusy = make([]Time, g.CopyEngines)
		gs.ceFree = g.CopyEngines
		r.gpus = append(r.gpus, gs)
	}
	// Links with a joint limit on both directions: one more resource each,
	// after every other (a direction of link i is resource 2i or 2i+1).
	for i, l := range m.Links {
		// At twice one way (or more) a joint limit can never bind.
		if l.Duplex > 0 && l.Duplex < 2*l.Bandwidth {
			if r.duplex == nil {
				r.duplex = make([]int32, len(m.Links))
				for k := range r.duplex {
					r.duplex[k] = -1
				}
			}
			r.duplex[i] = int32(r.s.addResource(l.Name+" "+m.Nodes[l.A].Name+"<->"+m.Nodes[l.B].Name+" both ways", l.Duplex, series))
			if len(r.duplexLink) == 0 {
				r.duplexFirst = r.duplex[i]
			}
			if r.duplex[i] != r.duplexFirst+int32(len(r.duplexLink)) {
				panic("sim: the joint limits' resources are not consecutive") // linkOf reads them so
			}
			r.duplexLink = append(r.duplexLink, int32(i))
		}
	}
	for i := range p.Streams {
		st := &streamState{r: r, idx: i, gpu: r.gpus[p.Streams[i].GPU], lastDone: -1, realRec: -1}
		st.pumpEv.Init(st)
		r.streams = append(r.streams, st)
	}
	streamFed, gpuFed := fed(m, p)
	for i, st := range r.streams {
		st.fed = streamFed[i]
	}
	for g, gs := range r.gpus {
		gs.fed = gpuFed[g]
	}
	r.eventRec = make([]int, len(p.Events))
	for i := range r.eventRec {
		r.eventRec[i] = -1
	}
	r.eventOp = make([]*opState, len(p.Events))
	r.routes = map[[2]int]Route{}
	r.colls = map[string]*collState{}
	r.plans = map[*CollPlan]*planState{}
	r.paths = map[[2]int]GPUPath{}
	for _, s := range p.Semaphores {
		r.sems = append(r.sems, semState{count: s.Initial, last: -1})
	}
	r.res.Ops = make([]OpRecord, 0, p.NumRecords())
	for i := range p.Threads {
		t := &threadState{r: r, idx: i, t: &p.Threads[i], host: &r.hosts[p.Threads[i].Host], prev: -1}
		t.stepEv.Init(t)
		t.wakeEv.Init(syncWake{t})
		t.cpu.owner = t
		t.cpu.grp = &t.host.cpu
		t.cpu.base = 1
		r.threads = append(r.threads, t)
		r.e.at(&t.stepEv, 0)
	}
	return r
}

// warn adds a warning about op of thread t. The same warning from the same
// place on one thread (the ops a repeat makes of one op) is given once,
// with a count of the others.
func (r *run) warn(t *threadState, op *Op, text string) { r.w.add(t.idx, op, text) }

// opState is an op in flight.
type opState struct {
	r      *run
	rec    int
	op     *Op
	thread *threadState
	stream *streamState
	// A wait's record op: its record (-1 for none) and, until the record
	// ended when the wait was issued, its state (only used while the
	// record has not ended: ended states are reused).
	targetRec int
	target    *opState
	started   bool
	done      bool
	waiting   bool   // registered as a waiter on target
	endedIn   uint64 // the event (engine.events) in which it ended
	waiters   []waiter
	kernel    *flow
	// kflow and kuse hold a kernel's flow, or a collective part's presence
	// on the SMs, so that neither allocates anything of its own.
	kflow  flow
	kuse   [1]use
	cp     *copyState
	ce     int  // copy engine held, -1
	ceFrom int  // record of the copy whose release granted the engine, -1
	ceAt   Time // when the engine was granted
	// Collective parts: the collective, this part's rank, and its kernel's
	// presence on the SMs.
	coll     *collState
	rank     int
	presence *flow
}

type waiter interface {
	opDone(o *opState)
}

func (o *opState) record() *OpRecord { return &o.r.res.Ops[o.rec] }

func (o *opState) addWaiter(w waiter) { o.waiters = append(o.waiters, w) }

// flowDone is a kernel's completion.
func (o *opState) flowDone(*flow) {
	o.stream.gpu.addClaim(-o.op.SMShare)
	o.finish()
}

// begin marks the op started now on its stream, with its cause.
func (o *opState) begin(kind CauseKind, cause int) {
	o.started = true
	rec := o.record()
	rec.Start = o.r.e.now
	rec.Begin = rec.Start
	rec.Cause, rec.CauseKind = int32(cause), kind
}

// newOp returns the state of a stream op: an ended op's, reset, or a new
// one.
func (r *run) newOp(rec int, op *Op, t *threadState, st *streamState) *opState {
	var o *opState
	// Only states of ops that ended in an earlier event: code running on
	// in the event that ended an op may still read it.
	if n := len(r.freeOps); n > 0 && r.freeOps[n-1].endedIn != r.e.events {
		// Field by field: finish cleared the pointers to other state, and
		// the embedded flow is set when used; clearing the whole struct
		// went through the collector's bulk barrier.
		o = r.freeOps[n-1]
		r.freeOps[n-1] = nil
		r.freeOps = r.freeOps[:n-1]
		o.started, o.done, o.waiting = false, false, false
		o.ceAt, o.rank = 0, 0
	} else {
		o = &opState{}
	}
	o.r, o.rec, o.op, o.thread, o.stream = r, rec, op, t, st
	o.targetRec, o.ce, o.ceFrom = -1, -1, -1
	return o
}

// finish completes a stream op: it leaves its stream and wakes its waiters.
// Its state is then reused for a later op: what outlives an op refers to
// its record (a stream's last ended op, an event's latest record), and the
// pointers that may reach it (a stream's last issued op, an event's latest
// record op) are cleared here. Code running on in the same event (a copy's
// stage, a collective's part) may still read it: newOp reuses only states
// of ops that ended in an earlier event.
func (o *opState) finish() {
	r := o.r
	now := r.e.now
	o.done = true
	o.endedIn = r.e.events
	o.record().End = now
	if o.ce >= 0 {
		o.stream.gpu.releaseCE(o)
	}
	st := o.stream
	st.q[st.head] = nil
	st.head++
	st.lastDone = o.rec
	if o.op.Kind != OpCollective || len(o.op.Coll.Tasks) > 0 { // not a call NCCL discarded
		st.realEnd, st.realRec = now, o.rec
	}
	if st.last == o {
		st.last = nil
	}
	if o.op.Kind == OpEventRecord && r.eventOp[o.op.Event] == o {
		r.eventOp[o.op.Event] = nil
	}
	st.kick()
	ws := o.waiters
	for _, w := range ws {
		w.opDone(o)
	}
	clear(ws)
	o.waiters = ws[:0]
	o.cp, o.coll, o.presence, o.kernel = nil, nil, nil, nil
	o.target = nil
	if !r.noReuse {
		r.freeOps = append(r.freeOps, o)
	}
}

// streamState runs a stream's ops in FIFO order.
type streamState struct {
	r        *run
	idx      int
	gpu      *gpuState
	q        []*opState
	head     int
	last     *opState // last op issued, while it has not ended
	lastDone int      // record of the last op ended, -1 for none
	// realRec is the last op ended that reached the GPU (not a call NCCL
	// discarded), -1 for none, and realEnd when it ended: what a sync sees.
	realEnd Time
	realRec int
	recs    []int // the records of the ops issued, in order
	pumpEv  Event
	// fed: some op of the program is issued to the stream (a sync on a
	// stream nothing is issued to is warned of, once).
	fed, warned bool
}

func (st *streamState) name() string { return st.r.p.StreamName(st.r.m, st.idx) }

func (st *streamState) kick() {
	if !st.pumpEv.Queued() {
		st.r.e.at(&st.pumpEv, st.r.e.now)
	}
}

func (st *streamState) opDone(*opState) { st.kick() }

func (st *streamState) enqueue(o *opState) {
	if st.head > 64 && st.head*2 > len(st.q) {
		n := copy(st.q, st.q[st.head:])
		for i := n; i < len(st.q); i++ {
			st.q[i] = nil
		}
		st.q = st.q[:n]
		st.head = 0
	}
	st.q = append(st.q, o)
	st.last = o
	o.record().StreamSeq = int32(len(st.recs))
	st.recs = append(st.recs, o.rec)
	st.kick()
}

// Handle pumps the stream: it starts the head op when it can, completing
// zero-time ops (records, satisfied waits) on the spot.
func (st *streamState) Handle() {
	r := st.r
	for st.head < len(st.q) {
		o := st.q[st.head]
		if o.started {
			return
		}
		// The cause: the latest of the op's issue, the previous op's end,
		// the awaited record's end and the copy engine grant.
		rec := o.record()
		kind, cause, at := CauseHost, int(rec.ThreadPrev), rec.Issued
		if p := st.lastDone; p >= 0 && r.res.Ops[p].End >= at {
			kind, cause, at = CauseStream, p, r.res.Ops[p].End
		}
		switch o.op.Kind {
		case OpEventWait:
			if !o.targetDone(st, CauseEvent, &kind, &cause, &at) {
				return
			}
			o.begin(kind, cause)
			o.finish()
		case OpEventRecord:
			o.begin(kind, cause)
			o.finish()
		case OpKernel:
			o.begin(kind, cause)
			o.kuse[0] = use{res: int32(st.gpu.smRes), coef: o.op.SMShare}
			o.kflow = flow{owner: o, bound: 1, uses: o.kuse[:], ev: Event{slot: -1}}
			f := &o.kflow
			o.kernel = f
			r.s.start(f, o.op.Duration.Seconds())
			st.gpu.addClaim(o.op.SMShare)
			return
		case OpCollective:
			// After the part of its communicator issued before it on
			// this GPU, on another stream.
			if !o.targetDone(st, CauseComm, &kind, &cause, &at) {
				return
			}
			o.begin(kind, cause)
			o.coll.arrive(o.rank)
			return
		case OpCopy:
			if o.op.Bytes == 0 {
				// CUDA moves nothing for a copy of no bytes: no copy
				// engine, link or staging; it ends where it starts.
				o.begin(kind, cause)
				o.finish()
				continue
			}
			if !st.gpu.acquireCE(o) {
				return
			}
			if o.ceFrom >= 0 && o.ceAt >= at && o.ceAt > rec.Issued {
				kind, cause = CauseEngine, o.ceFrom
			}
			o.begin(kind, cause)
			o.record().Engine = int32(o.ce)
			o.cp.pump()
			return
		}
	}
}

// targetDone reports whether the op o waits for (a wait's record, a
// collective part's predecessor on its communicator), if any, has ended;
// if not, st is woken when it does. When it ended after what held o up so
// far (and after o's issue), it becomes o's cause, of kind k.
func (o *opState) targetDone(st *streamState, k CauseKind, kind *CauseKind, cause *int, at *Time) bool {
	tr := o.targetRec
	if tr < 0 {
		return true
	}
	end := o.r.res.Ops[tr].End
	if end < 0 { // not ended: o.target is its live state
		if !o.waiting {
			o.waiting = true
			o.target.addWaiter(st)
		}
		return false
	}
	if end >= *at && end > o.record().Issued {
		*kind, *cause, *at = k, tr, end
	}
	return true
}

// acquireCE grants o a copy engine if one is free to it and no copy that
// may take one queues before it.
func (g *gpuState) acquireCE(o *opState) bool {
	if o.ce >= 0 {
		return true
	}
	if g.mayTake(o) && !g.queuedMayTake() {
		g.grant(o, g.freeCE(), -1)
		return true
	}
	for _, q := range g.ceQueue {
		if q == o {
			return false
		}
	}
	g.ceQueue = append(g.ceQueue, o)
	return false
}

// mayTake says whether copy o may take a free engine now. With two engines
// or more, each direction keeps one, as CUDA's asyncEngineCount 2 means
// copies in both directions at once (two copies into the GPU queue for one
// engine while the other waits for a copy out of it): a copy in one
// direction does not take the last free engine while its direction holds
// one and the other direction none. Copies within the GPU (dir -1) take
// any free engine.
func (g *gpuState) mayTake(o *opState) bool {
	if g.ceFree == 0 {
		return false
	}
	d := o.cp.dir
	if d < 0 || len(g.ces) < 2 || g.ceFree > 1 {
		return true
	}
	return g.ceHeld[d] == 0 || g.ceHeld[1-d] > 0
}

func (g *gpuState) queuedMayTake() bool {
	for _, q := range g.ceQueue {
		if g.mayTake(q) {
			return true
		}
	}
	return false
}

// freeCE is the lowest-numbered free engine.
func (g *gpuState) freeCE() int {
	for i, h := range g.ces {
		if h == nil {
			return i
		}
	}
	panic("sim: no free copy engine") // callers check ceFree
}

func (g *gpuState) grant(o *opState, i int, from int) {
	g.ces[i] = o
	g.ceSince[i] = g.r.e.now
	g.ceFree--
	if d := o.cp.dir; d >= 0 {
		g.ceHeld[d]++
	}
	o.ce, o.ceFrom, o.ceAt = i, from, g.r.e.now
}

// releaseCE frees o's engine and grants free engines to the queued copies
// that may take one, in the order they asked.
func (g *gpuState) releaseCE(o *opState) {
	i := o.ce
	g.ceBusy[i] += g.r.e.now - g.ceSince[i]
	g.ces[i] = nil
	g.ceFree++
	if d := o.cp.dir; d >= 0 {
		g.ceHeld[d]--
	}
	for k := 0; k < len(g.ceQueue) && g.ceFree > 0; {
		next := g.ceQueue[k]
		if !g.mayTake(next) {
			k++
			continue
		}
		copy(g.ceQueue[k:], g.ceQueue[k+1:])
		g.ceQueue[len(g.ceQueue)-1] = nil
		g.ceQueue = g.ceQueue[:len(g.ceQueue)-1]
		g.grant(next, g.freeCE(), o.rec)
		next.stream.kick()
		k = 0 // a grant may let an earlier copy take the next engine
	}
}

// threadState runs a host thread's ops in program order.
type threadState struct {
	r      *run
	idx    int
	t      *Thread
	host   *hostState
	next   int
	cur    *opState // op whose host side is in progress
	curRec int
	phase  phase
	cpu    flow
	stepEv Event
	// pending counts the ops a sync still waits for; lastOp is the one that
	// ended last. wakeEv returns a sync the host's SyncLatency after it.
	pending int
	lastOp  int
	wakeEv  Event
	prev    int // record of the previous op on this thread
	done    bool
	inStep  bool // inside Handle: no need to schedule another step
	end     Time
	cpuTime Time
	blocked Time
	since   Time
}

type phase uint8

const (
	phReady    phase = iota
	phOverhead       // paying the API overhead of the op at next
	phHostWork       // running a host op
	phSync           // blocked in a sync
	phStaging        // blocked while a pageable copy stages
	phAwait          // blocked on a semaphore
)

func (t *threadState) kick() {
	if !t.stepEv.Queued() {
		t.r.e.at(&t.stepEv, t.r.e.now)
	}
}

// Handle runs the thread until it blocks or ends.
func (t *threadState) Handle() {
	t.inStep = true
	defer func() { t.inStep = false }()
	for !t.done && t.phase == phReady {
		if t.next >= len(t.t.Ops) {
			t.done = true
			t.end = t.r.e.now
			return
		}
		t.start(&t.t.Ops[t.next])
	}
}

func (t *threadState) newRecord(op *Op) int {
	r := t.r
	now := r.e.now
	rec := OpRecord{
		ID: op.ID, Kind: op.Kind, Thread: int32(t.idx), Stream: -1, GPU: -1, Event: -1,
		Call: now, Issued: now, Start: -1, End: -1, HostEnd: -1,
		Src: -1, Dst: -1, Engine: -1, Target: -1, StreamSeq: -1, Sem: -1,
		ThreadPrev: int32(t.prev), Cause: int32(t.prev), CauseKind: CauseHost,
	}
	if t.prev < 0 {
		rec.CauseKind = CauseNone
	}
	rec.MemoryBound = op.Kind == OpKernel && op.MemoryBound
	switch op.Kind {
	case OpKernel, OpCopy, OpEventRecord, OpEventWait:
		rec.Stream = int32(op.Stream)
		rec.GPU = int32(r.p.Streams[op.Stream].GPU)
	case OpSync:
		switch op.Sync {
		case SyncStream:
			rec.Stream = int32(op.Stream)
			rec.GPU = int32(r.p.Streams[op.Stream].GPU)
		case SyncDevice:
			rec.GPU = int32(op.GPU)
		}
	}
	switch op.Kind {
	case OpSignal, OpAwait:
		rec.Sem = int32(op.Sem)
	case OpEventRecord, OpEventWait:
		rec.Event = int32(op.Event)
	case OpSync:
		if op.Sync == SyncEvent {
			rec.Event = int32(op.Event)
		}
	case OpCopy:
		rec.Bytes = op.Bytes
		rec.Src, rec.Dst = int32(op.Src), int32(op.Dst)
		rec.Memory = op.Memory
	}
	r.res.Ops = append(r.res.Ops, rec)
	return len(r.res.Ops) - 1
}

// start begins the op at t.next.
func (t *threadState) start(op *Op) {
	r := t.r
	t.curRec = t.newRecord(op)
	switch op.Kind {
	case OpHost:
		t.phase = phHostWork
		t.runCPU(op.Duration)
	case OpSignal:
		s := &r.sems[op.Sem]
		s.count += op.Count
		s.last = t.curRec
		for s.count > 0 && len(s.waiters) > 0 {
			w := s.waiters[0]
			s.waiters = s.waiters[1:]
			s.count--
			w.acquired(t.curRec)
		}
		t.hostDone()
	case OpAwait:
		s := &r.sems[op.Sem]
		if s.count > 0 && len(s.waiters) == 0 {
			s.count--
			r.res.Ops[t.curRec].Start = r.e.now
			t.hostDone()
			return
		}
		t.phase = phAwait
		t.since = r.e.now
		s.waiters = append(s.waiters, t)
	default: // CUDA-like calls pay the API overhead first
		t.phase = phOverhead
		if op.GraphOps > 0 {
			t.runCPU(r.m.Hosts[t.t.Host].GraphLaunch) // one launch for the whole graph
			return
		}
		// A collective is one library call per GPU, in a group, even one
		// NCCL discards without launching anything (nccl-tests on one GPU
		// in place still takes 4.6-5.6 us a call: measured.md §4).
		calls := Time(1)
		if op.Kind == OpCollective && !op.OneRank {
			calls = Time(len(op.Coll.Ranks))
		}
		h := &r.m.Hosts[t.t.Host]
		d := satMul(h.APIOverhead, calls)
		if op.Kind == OpCopy && op.Bytes > 0 && r.copyPath(op).Kind == PathStaged {
			d = satAdd(d, h.StagingSetup) // the driver sets up the staging in the call
		}
		if op.Kind <= OpEventWait { // kernels, copies, records, waits
			d = satAdd(d, h.TimingOverhead)
		}
		t.runCPU(d)
	}
}

// runCPU runs d of CPU work on the thread; flowDone continues.
func (t *threadState) runCPU(d Time) {
	t.since = t.r.e.now
	if d == 0 {
		t.flowDone(&t.cpu)
		return
	}
	t.r.s.start(&t.cpu, d.Seconds())
}

// flowDone ends the thread's CPU work.
func (t *threadState) flowDone(*flow) {
	r := t.r
	now := r.e.now
	t.cpuTime += now - t.since
	rec := &r.res.Ops[t.curRec]
	op := &t.t.Ops[t.next]
	switch t.phase {
	case phHostWork:
		rec.Start = rec.Issued
		t.hostDone()
	case phOverhead:
		t.afterOverhead(op)
	}
}

// hostDone ends the current op's host side at now and readies the next op.
func (t *threadState) hostDone() {
	now := t.r.e.now
	rec := &t.r.res.Ops[t.curRec]
	rec.HostEnd = now
	if !rec.Kind.OnStream() {
		if rec.Kind == OpHost || rec.Kind == OpSignal {
			rec.Start = rec.Issued
		}
		rec.End = now
	}
	t.prev = t.curRec
	t.cur = nil
	t.phase = phReady
	t.next++
	if !t.inStep {
		t.kick()
	}
}

func (t *threadState) block(p phase) {
	t.phase = p
	t.since = t.r.e.now
}

func (t *threadState) unblock() {
	t.blocked += t.r.e.now - t.since
}

// afterOverhead issues a CUDA-like call once its overhead is paid.
func (t *threadState) afterOverhead(op *Op) {
	r := t.r
	now := r.e.now
	if op.GraphOps > 1 {
		// A CUDA graph: one launch issued every op of the instance. Issue
		// all but the last here; the last goes through the normal path.
		head := r.res.Ops[t.curRec]
		for k := 0; k < op.GraphOps-1; k++ {
			gop := &t.t.Ops[t.next]
			rec := &r.res.Ops[t.curRec]
			rec.Issued = now
			t.issueStreamOp(gop)
			rec = &r.res.Ops[t.curRec]
			rec.HostEnd = now
			t.prev = t.curRec
			t.next++
			t.curRec = t.newRecord(&t.t.Ops[t.next])
			nr := &r.res.Ops[t.curRec]
			nr.Call, nr.CauseKind, nr.Cause = head.Call, CauseHost, int32(t.prev)
		}
		op = &t.t.Ops[t.next]
	}
	rec := &r.res.Ops[t.curRec]
	rec.Issued = now
	if op.Kind == OpSync {
		rec.Start = now
		t.sync(op)
		return
	}
	if o := t.issueStreamOp(op); o != nil && op.Kind == OpCopy && op.Bytes > 0 && op.Memory == Pageable && o.cp.hostStage >= 0 {
		// The call returns only once the host has staged the data (H2D) or
		// copied it out of the staging buffer (D2H).
		t.cur = o
		t.block(phStaging)
		o.cp.pump()
		return
	}
	t.hostDone()
}

// issueStreamOp hands op (its record is t.curRec) to its stream(s); it
// returns the op's state (nil for collectives).
func (t *threadState) issueStreamOp(op *Op) *opState {
	r := t.r
	rec := &r.res.Ops[t.curRec]
	if op.Kind == OpCollective {
		t.issueCollective(op)
		return nil
	}
	o := r.newOp(t.curRec, op, t, r.streams[op.Stream])
	switch op.Kind {
	case OpEventRecord:
		r.eventRec[op.Event], r.eventOp[op.Event] = t.curRec, o
	case OpEventWait:
		o.targetRec, o.target = r.eventRec[op.Event], r.eventOp[op.Event]
		rec.Target = int32(o.targetRec)
		if o.targetRec < 0 {
			r.warn(t, op, waitUnrecorded(r.p.Events[op.Event]))
		}
	case OpCopy:
		o.cp = newCopy(o)
	}
	o.stream.enqueue(o)
	return o
}

// issueCollective enqueues a part of the collective on each rank's stream
// (or on Rank's alone), each with a record of its own ("ID@GPU").
func (t *threadState) issueCollective(op *Op) {
	r := t.r
	now := r.e.now
	first := r.res.Ops[t.curRec]
	var c *collState
	if op.OneRank {
		c = r.collective(op)
	} else {
		c = newCollective(r, op)
	}
	var parts []*opState
	for i, g := range op.Coll.Ranks {
		if op.OneRank && i != op.Rank {
			continue
		}
		rec := t.curRec
		if len(parts) > 0 {
			r.res.Ops = append(r.res.Ops, first)
			rec = len(r.res.Ops) - 1
		}
		x := &r.res.Ops[rec]
		x.ID = op.ID + "@" + r.m.GPUs[g].Name
		x.Stream, x.GPU = int32(op.Streams[i]), int32(g)
		x.Issued, x.HostEnd = now, now
		x.Bytes = op.Coll.Bytes
		x.Coll = op.Coll
		o := r.newOp(rec, op, t, r.streams[op.Streams[i]])
		c.addPart(i, o)
		parts = append(parts, o)
		if len(op.Coll.Tasks) > 0 { // NCCL discards the others
			r.commOrder(c, o, g)
		}
	}
	for _, o := range parts {
		o.stream.enqueue(o)
	}
}

// commPart is the last part of a communicator issued on a GPU.
type commPart struct {
	rec int32
	op  *opState
}

// commOrder puts part o of collective c, on GPU g, behind the part issued
// before it there on the same communicator when that part has not ended and
// is on another stream (on the same stream, the stream orders them).
func (r *run) commOrder(c *collState, o *opState, g int) {
	k := [2]int32{int32(r.commOf(c)), int32(g)}
	if r.commLast == nil {
		r.commLast = map[[2]int32]commPart{}
	}
	if p, ok := r.commLast[k]; ok && r.res.Ops[p.rec].End < 0 && p.op.stream != o.stream {
		o.targetRec, o.target = int(p.rec), p.op
		o.record().Target = p.rec
	}
	r.commLast[k] = commPart{int32(o.rec), o}
}

// commOf returns the id of c's communicator: a named one's index in
// Program.Comms, or the one of its set of GPUs, numbered after them.
func (r *run) commOf(c *collState) int {
	if c.op.Comm > 0 {
		return int(c.op.Comm) - 1
	}
	ps := c.ps
	if ps.comm < 0 {
		set := slices.Clone(c.plan.Ranks)
		slices.Sort(set)
		key := fmt.Sprint(set)
		id, ok := r.commIDs[key]
		if !ok {
			id = len(r.p.Comms) + len(r.commSets)
			if r.commIDs == nil {
				r.commIDs = map[string]int{}
			}
			r.commIDs[key] = id
			r.commSets = append(r.commSets, set)
		}
		ps.comm = id
	}
	return ps.comm
}

// commName names communicator id for messages.
func (r *run) commName(id int) string {
	if id < len(r.p.Comms) {
		return "communicator " + r.p.Comms[id]
	}
	names := make([]string, 0, len(r.commSets[id-len(r.p.Comms)]))
	for _, g := range r.commSets[id-len(r.p.Comms)] {
		names = append(names, r.m.GPUs[g].Name)
	}
	return "the communicator of " + strings.Join(names, ", ")
}

// linkUse appends to us the resources hop h uses, coef per byte: its
// direction, and the link's joint limit where it has one.
func (r *run) linkUse(us []use, h Hop, coef float64) []use {
	i := 2 * h.Link
	if h.Reverse {
		i++
	}
	us = append(us, use{res: int32(i), coef: coef})
	if r.duplex != nil && r.duplex[h.Link] >= 0 {
		us = append(us, use{res: r.duplex[h.Link], coef: coef})
	}
	return us
}

// satMul multiplies a time by a count, saturating at MaxTime.
func satMul(t, n Time) Time {
	if n > 0 && t > MaxTime/n {
		return MaxTime
	}
	return t * n
}

// stagingDone releases a thread in a pageable copy. The time its memcpy
// chunks ran is CPU time; the rest it waited for a staging buffer.
func (t *threadState) stagingDone(busy Time) {
	t.unblock()
	t.blocked -= busy
	t.cpuTime += busy
	t.hostDone()
}

// sync blocks until the op's targets complete and the host sees it: the
// host's SyncLatency after the last of the work it waits for that reached
// the GPU completed, when that is later than now (work that completed
// shortly before the call ended is seen only then).
func (t *threadState) sync(op *Op) {
	r := t.r
	var targets []*opState
	switch op.Sync {
	case SyncStream:
		st := r.streams[op.Stream]
		if l := st.last; l != nil {
			targets = append(targets, l)
		}
		if !st.fed && !st.warned {
			st.warned = true
			r.warn(t, op, syncStreamUnfed(st.name()))
		}
	case SyncDevice:
		for _, st := range r.streams {
			if st.gpu.idx == op.GPU && st.last != nil {
				targets = append(targets, st.last)
			}
		}
		if g := r.gpus[op.GPU]; !g.fed && !g.syncWarned {
			g.syncWarned = true
			r.warn(t, op, syncDeviceUnfed(r.m.GPUs[op.GPU].Name))
		}
	case SyncEvent:
		if r.eventRec[op.Event] < 0 {
			r.warn(t, op, syncUnrecorded(r.p.Events[op.Event]))
		} else {
			r.res.Ops[t.curRec].Target = int32(r.eventRec[op.Event])
			if l := r.eventOp[op.Event]; l != nil {
				targets = append(targets, l)
			}
		}
	}
	if len(targets) == 0 {
		t.lastOp = -1
		t.seeSync(op)
		return
	}
	t.pending = len(targets)
	t.lastOp = -1
	t.block(phSync)
	for _, o := range targets {
		o.addWaiter(t)
	}
}

// seeSync ends sync op once its targets have completed: now, or once the
// host sees the last work it waits for that reached the GPU (a call NCCL
// discarded did not), SyncLatency after that work completed. The thread
// is blocked in it when lastOp is the target it waited for, and not when
// lastOp is -1.
func (t *threadState) seeSync(op *Op) {
	r := t.r
	now := r.e.now
	end, rec := Time(-1), -1
	note := func(e Time, i int) {
		if i >= 0 && e > end {
			end, rec = e, i
		}
	}
	switch op.Sync {
	case SyncStream:
		st := r.streams[op.Stream]
		note(st.realEnd, st.realRec)
	case SyncDevice:
		for _, st := range r.streams {
			if st.gpu.idx == op.GPU {
				note(st.realEnd, st.realRec)
			}
		}
	case SyncEvent: // the record it depends on, not one issued since
		if e := int(r.res.Ops[t.curRec].Target); e >= 0 {
			note(r.res.Ops[e].End, e)
		}
	}
	if l := r.m.Hosts[t.t.Host].SyncLatency; rec >= 0 && l > now-end {
		if t.lastOp < 0 {
			t.block(phSync)
		}
		t.lastOp = rec
		r.e.after(&t.wakeEv, l-(now-end))
		return
	}
	if t.lastOp < 0 {
		t.hostDone()
		return
	}
	t.synced()
}

// opDone is called when an op a sync waits for completes.
func (t *threadState) opDone(o *opState) {
	t.pending--
	t.lastOp = o.rec
	if t.pending > 0 {
		return
	}
	t.seeSync(&t.t.Ops[t.next])
}

// synced returns from a sync that waited: its cause is the work it waited
// to see.
func (t *threadState) synced() {
	t.unblock()
	rec := &t.r.res.Ops[t.curRec]
	rec.Cause, rec.CauseKind = int32(t.lastOp), CauseSync
	t.hostDone()
}

// syncWake is the event that returns a thread from a sync once its host
// has seen the targets complete.
type syncWake struct{ t *threadState }

func (w syncWake) Handle() { w.t.synced() }

// acquired wakes a thread blocked on a semaphore.
func (t *threadState) acquired(signal int) {
	t.unblock()
	rec := &t.r.res.Ops[t.curRec]
	rec.Start = t.r.e.now
	rec.Cause, rec.CauseKind = int32(signal), CauseSemaphore
	t.hostDone()
}

// finish closes the statistics of the run.
func (r *run) finish() *Result {
	res := r.res
	res.Warnings = r.w.done()
	var end Time
	for i := range res.Ops {
		end = max(end, res.Ops[i].End, res.Ops[i].HostEnd, res.Ops[i].Start, res.Ops[i].Issued)
	}
	for _, t := range r.threads {
		if t.done && t.end > end {
			end = t.end
		}
	}
	res.Makespan = end
	// Ops a deadlock left unfinished end at the makespan; those that never
	// started start there too. The same pass (one of two over every
	// record) finds what the analysis below needs: each GPU's stream ops
	// that never reached a stream, and the op that ended last.
	unqueued := make([][]int, len(r.m.GPUs))
	last := -1
	var lastEnd Time
	for i := range res.Ops {
		rec := &res.Ops[i]
		if rec.End < 0 {
			rec.Unfinished = true
			if rec.Start < 0 {
				rec.Start = end
			}
			rec.End = end
		}
		if rec.HostEnd < 0 {
			rec.Unfinished = true
			rec.HostEnd = end
		}
		if rec.Kind.OnStream() && rec.StreamSeq < 0 {
			unqueued[rec.GPU] = append(unqueued[rec.GPU], i)
		}
		if e := max(rec.End, rec.HostEnd); last < 0 || e >= lastEnd {
			last, lastEnd = i, e
		}
	}
	// The parts of a collective that never began (a deadlock) waited for
	// their ranks until the end, whether they reached their stream's head
	// or not.
	for _, st := range r.streams {
		for _, o := range st.q[st.head:] {
			if o.coll != nil && !o.coll.began {
				o.record().Begin = end
			}
		}
	}
	r.s.closeStats(end)
	res.Events = r.e.events
	res.Solves = r.s.solves
	for _, t := range r.threads {
		res.Threads = append(res.Threads, ThreadStats{Name: t.t.Name, CPU: t.cpuTime, Blocked: t.blocked, End: t.end})
	}
	stats := func(i int) ResourceStats {
		x := &r.s.res[i]
		return ResourceStats{Name: x.name, Capacity: x.capacity, Used: x.used, Busy: x.busy, Peak: x.peak, Series: x.series}
	}
	link := func(l LinkStats, i int) LinkStats {
		l.ResourceStats = stats(i)
		l.Bytes = l.Used
		if r.excess != nil {
			l.Bytes = max(l.Used-r.excess[i], 0)
		}
		return l
	}
	for i := range r.m.Links {
		res.Links = append(res.Links, link(LinkStats{Link: i}, 2*i))
		res.Links = append(res.Links, link(LinkStats{Link: i, Reverse: true}, 2*i+1))
	}
	for i := range r.duplex {
		if r.duplex[i] >= 0 {
			res.Links = append(res.Links, link(LinkStats{Link: i, Both: true}, int(r.duplex[i])))
		}
	}
	for _, h := range r.hosts {
		res.HostMemory = append(res.HostMemory, stats(h.memRes))
	}
	for _, g := range r.gpus {
		res.GPUMemory = append(res.GPUMemory, stats(g.memRes))
		for i, h := range g.ces {
			if h != nil {
				g.ceBusy[i] += end - g.ceSince[i]
			}
		}
	}
	sops := make([][]int, len(r.streams))
	for i, st := range r.streams {
		sops[i] = st.recs
	}
	res.GPUs = gpuStats(res, r.gpus, sops, unqueued)
	res.CriticalPath = criticalPath(res, last)
	return res
}

// stuck describes every thread and stream that still has work, and returns
// the position of the first stuck op.
func (r *run) stuck() (string, []string) {
	var out []string
	first := ""
	note := func(op *Op) {
		if first == "" {
			first = op.Where
		}
	}
	desc := func(o *opState) string {
		s := "op " + o.record().ID
		if o.op.Where != "" {
			s += " (" + o.op.Where + ")"
		}
		return s
	}
	for _, t := range r.threads {
		if t.done {
			continue
		}
		op := &t.t.Ops[t.next]
		note(op)
		where := "op " + op.ID
		if op.Where != "" {
			where += " (" + op.Where + ")"
		}
		switch t.phase {
		case phAwait:
			out = append(out, fmt.Sprintf("thread %s: %s awaits semaphore %s (count %d)", t.t.Name, where, r.p.Semaphores[op.Sem].Name, r.sems[op.Sem].count))
		case phSync:
			out = append(out, fmt.Sprintf("thread %s: %s is blocked in a sync", t.t.Name, where))
		case phStaging:
			// A pageable copy's call returns once its bytes are staged,
			// which waits on the work ahead of the copy on its stream.
			out = append(out, fmt.Sprintf("thread %s: %s is blocked in the call of a pageable copy, which returns once its bytes are staged; they wait on the work ahead of it on its stream", t.t.Name, where))
		default:
			out = append(out, fmt.Sprintf("thread %s: %s cannot proceed", t.t.Name, where))
		}
	}
	for _, st := range r.streams {
		if st.head >= len(st.q) {
			continue
		}
		if o := st.q[st.head]; o.op.Kind == OpCollective && o.started && !o.coll.began {
			note(o.op)
			out = append(out, fmt.Sprintf("stream %s: %s waits for the other ranks of the collective: %s", st.name(), desc(o), o.coll.waitingRanks()))
			continue
		}
		o := st.q[st.head]
		note(o.op)
		msg := fmt.Sprintf("stream %s: %s", st.name(), desc(o))
		if o.op.Kind == OpEventWait && o.target != nil {
			msg += " waits for event " + r.p.Events[o.op.Event] + " recorded by " + desc(o.target)
			if o.target.stream != nil {
				msg += " on stream " + o.target.stream.name()
			}
		} else if o.op.Kind == OpCopy && o.ce < 0 {
			msg += " waits for a copy engine"
		} else if o.op.Kind == OpCollective && o.target != nil {
			msg += fmt.Sprintf(" waits for %s on stream %s, issued before it on %s (NCCL runs a communicator's collectives one at a time, in the order each GPU issues them)", desc(o.target), o.target.stream.name(), r.commName(r.commOf(o.coll)))
		} else if o.op.Kind == OpCollective {
			msg += " waits to reach the head of its stream"
		}
		out = append(out, msg)
	}
	sort.Strings(out)
	return first, out
}

// inf is +Inf, the bound of a flow limited only by its resources.
var inf = math.Inf(1)

// blame names, in e, the op whose event or flow would have ended past the
// time range (the engine's culprit), its position, and for a transfer the
// narrowest resource it crosses.
func (r *run) blame(e *OverflowError) {
	who := r.e.culprit
	f, _ := who.(*flow)
	if f != nil {
		who = f.owner
	}
	var op *Op
	id, what := "", ""
	switch x := who.(type) {
	case *opState: // a kernel
		op, id = x.op, x.record().ID
		if f != nil && r.e.rate < 1 {
			e.Why = fmt.Sprintf("running at %.3g of its speed, sharing the SMs of %s", r.e.rate, r.m.GPUs[x.stream.gpu.idx].Name)
		}
	case *stage: // a copy's piece: its delay or its bytes
		op, id = x.c.o.op, x.c.o.record().ID
		e.Transfer = true
		if f != nil {
			bound := "its bound"
			if x.grp != nil {
				h := r.m.Hosts[r.m.Nodes[x.c.o.op.Src].Index]
				if x.c.hostStage == 1 {
					h = r.m.Hosts[r.m.Nodes[x.c.o.op.Dst].Index]
				}
				bound = "the memcpy rate of " + h.Name
			}
			e.Why = r.transferWhy(f, r.e.rate, bound)
		}
	case *collState: // a collective's start delay
		op, id = x.op, x.op.ID
	case *taskRun: // a collective's transfer: its delay or its bytes
		op, id = x.c.op, x.c.op.ID
		end := func(g int32) string {
			if g < 0 {
				return "the switch"
			}
			return r.m.GPUs[g].Name
		}
		what = fmt.Sprintf(", its transfer %s -> %s,", end(x.info.src), end(x.info.dst))
		e.Transfer = true
		if f != nil {
			e.Why = r.transferWhy(f, r.e.rate, "its bound (its protocol's, or its share of oversubscribed SMs)")
		}
	case *threadState: // CPU work: a host op or an API call
		if x.next < len(x.t.Ops) {
			op, id = &x.t.Ops[x.next], r.res.Ops[x.curRec].ID
		}
	case syncWake: // a sync seeing its work SyncLatency after it ended
		op, id = &x.t.t.Ops[x.t.next], r.res.Ops[x.t.curRec].ID
		e.Why = "returning sync_latency (" + r.m.Hosts[x.t.t.Host].SyncLatency.String() + ") after the work it waits for ended"
	}
	if op == nil {
		return
	}
	kind := op.Kind.String()
	if op.Kind == OpCollective && op.Coll != nil {
		kind = op.Coll.Name
	}
	e.What = fmt.Sprintf("op %s (%s)%s", id, kind, what)
	e.Where = op.Where
}

// transferWhy says at what rate transfer f moves and what bounds it: the
// resource it crosses with the least capacity (a link direction, a
// memory), or its own bound (described as bound) where that is lower.
func (r *run) transferWhy(f *flow, rate float64, bound string) string {
	least, name := inf, ""
	for _, u := range f.uses {
		if c := r.s.res[u.res].capacity / u.coef; c < least {
			least, name = c, r.s.res[u.res].name
		}
	}
	msg := "moving at " + rateString(rate)
	switch {
	case f.bound < least:
		msg += ", at most " + bound + ", " + rateString(f.bound)
	case name != "":
		msg += ", over " + name + " (" + rateString(least) + ")"
	}
	return msg
}

// rateString formats bytes per second with an SI prefix: "26.15 GB/s".
func rateString(v float64) string {
	units := []string{"B/s", "kB/s", "MB/s", "GB/s", "TB/s", "PB/s", "EB/s"}
	i := 0
	for i < len(units)-1 && v >= 1000 {
		v /= 1000
		i++
	}
	return strconv.FormatFloat(v, 'g', 4, 64) + " " + units[i]
}

package sim

import (
	"math"
	"math/bits"
	"slices"
)

// The flow model: every activity that consumes a shared rate (a transfer on
// links and memories, a kernel on a GPU's SMs) is a flow with an amount of
// work, and every shared capacity is a resource. A flow uses each of its
// resources with a coefficient (units of the resource per unit of the flow's
// work) and may have a rate bound of its own. Rates are the max-min fair
// allocation computed by progressive filling: all unfrozen flows rise at the
// same rate until a resource saturates or a flow reaches its bound; those
// freeze; repeat. With coefficients 1 and no bounds this is exactly the
// max-min fair sharing of SimGrid's CM02 network model; with a capacity C,
// coefficients c_i and bounds 1 it is proportional sharing (each flow gets
// min(1, C/sum c_i)).
//
// Rates are re-solved whenever flows start, end or change bounds, and only
// for what the changes can affect. Two facts of progressive filling bound it
// (for a change of one flow f; several changes compose):
//
//   - Removing f, whose rate was L, leaves every flow with a rate below L as
//     it was, and every other flow at L or above: below level L the filling
//     saturates the same resources in the same order (none of f's, or f
//     would have frozen earlier).
//   - Adding f leaves every flow below the level m at which f will freeze as
//     it was, and the others at m or above, for the same reason; m is at
//     least the level at which one of f's resources would saturate with f
//     rising, a lower bound computed from the rates on those resources.
//
// So a solve takes L0, the least of those levels over the pending changes,
// keeps every flow with a rate below L0 frozen at its rate, and fills the rest
// from there: only the flows at L0 or above that connect, through resources
// they share, to a changed flow. Resources saturated below L0 carry no such
// flow, so the re-solved part is often a small corner of a large component.
// (Re-solving every flow at L0 or above, connected or not, gives the same
// rates: where changes reach most resources anyway, solves do that for a
// while and spare the search and its scans; see visitAll.) A solve costs
// the scans of the visited resources' entry lists (each flow's rate is kept
// in a small dense array, so frozen flows are not touched) plus O(U) for
// the U uses of the re-solved flows, and the filling queue's work:
// resources sit in a radix heap keyed by the level at which they would
// saturate. The solver keeps what it reads of each flow in dense slots, not
// in the flows (see slot).
//
// CPU work is processor-shared outside the solver: a group (a host's cores)
// lets each of its n running flows go at min(1, cores/n) of its own speed, by
// setting the flows' bounds.

// LoadPoint is the load of a resource from time T on.
type LoadPoint struct {
	T    Time
	Load float64 // units per second
}

// resource is a shared capacity. What a scan reads comes first, in one
// cache line (a resource is 192 bytes): a large solve scans a thousand
// resources' lists.
type resource struct {
	capacity float64 // units per second
	// removed is what the flows removed since the last solve added to
	// load (coefficient x rate): visitAll takes it out of the load.
	removed float64
	// slots are the solver slots of the active flows using it (a flow
	// that uses it twice, twice); beside them, coefs holds their
	// coefficients. Their rates are the solver's flowRate, by slot.
	slots   []int32
	busyPos int32 // its place in solver.busy while it has flows
	dirty   bool
	track   bool    // keep a load series
	load    float64 // current sum of coefficient*rate
	mark    uint64  // the solve that visited it; the first line ends here

	// What a change of load writes, and crossing's result, in the second
	// line.
	used       float64 // units carried so far
	busy       Time    // time with load > 0
	peak       float64 // largest load seen
	lastChange Time
	// cross is a lower bound of the level at which the resource saturates
	// with its changed flows rising, valid in solve crossMark.
	cross     float64
	crossMark uint64
	name      string

	coefs  []float64
	series []LoadPoint
	_      [16]byte
}

// fillState is what a filling reads and writes of a resource, kept apart
// from the resource (s.fs[i] for s.res[i]) in 32 bytes, so that a freeze,
// which updates it at each resource of the flow, finds it in cache: the
// fill states of a thousand resources take 32 KB.
type fillState struct {
	rem     float64 // capacity not yet given to frozen flows
	wsum    float64 // sum of coefficients of unfrozen flows
	newLoad float64 // the load the solve in progress gives it
	nUnf    int32   // unfrozen flows
	// nonUnit counts the resource's coefficients that are not 1. Where
	// all are 1, scans read no coefficient, and a freeze needs no
	// coefficient (the solver's refs hold none).
	nonUnit int32
}

// level is the filling level at which the resource saturates.
func (x *fillState) level() float64 { return x.rem / x.wsum }

// use is one resource of a flow.
type use struct {
	res  int32 // 32-bit: a use is 16 bytes, and flows and tasks hold many
	coef float64
}

// ref is a use as the solver keeps it: the resource and the flow's
// position in its lists. The coefficient is in the resource's coefs, where
// a freeze reads it only if the resource has one other than 1 (links have
// none): 8-byte refs keep the slab, which a large solve reads at random,
// half the size it was with the coefficient beside each.
type ref struct {
	res, pos int32
}

// slot is what the solver keeps of a flow registered on its resources, in
// a dense array (s.sl) so that a solve's passes over the flows it re-solves
// read a few cache lines instead of the flows themselves, wherever their
// owners keep them. The flow's uses, as refs, are in the solver's slab at
// s.uses[off:off+n] (see refs). A slot is one cache line. (Slots of 256
// bytes that held up to 12 uses themselves, to spare the slab's miss that
// waits on the slot's, were slower on large cases: the solve's data then
// spilled further out of the cache.)
//
// The slot also keeps the flow's rate and remaining work, and the number of
// its completion event's place in the event queue: a solve re-times the
// completions of the flows whose rates it changes without reading the
// flows (see scheduleSlot).
type slot struct {
	next      float64 // the rate the solve in progress gives it
	rate      float64 // the flow's rate
	bound     float64 // the flow's bound
	remaining float64 // work left at time last
	last      Time
	amount    float64
	off       int32
	n         int32
	// qs is where the flow's completion event was queued (its Event.slot:
	// a heap slot, or <= -2 in the FIFO), -1 when it is not queued.
	qs int32
	// touched marks a flow started or re-bounded since the last solve.
	touched bool
	frozen  bool
	noEnd   bool
}

// refs returns the uses of slot st.
func (s *solver) refs(st *slot) []ref {
	return s.uses[st.off : st.off+st.n]
}

// globalSolves is how many solves visit all resources after one that
// found that a change reached most of them; then one finds again.
const globalSolves = 15

// resolving marks, in flowRate, a flow that the solve in progress
// re-computes and has not yet frozen. It is a NaN, so that no comparison
// puts it below a threshold (a scan meets a flow that an earlier scan
// marked), and only its bits are compared (isResolving): arithmetic yields
// other NaNs.
const resolvingBits = 0x7ff8_0000_5ee0_0001

var resolving = math.Float64frombits(resolvingBits)

// isResolving reports whether a flow rate is the resolving mark.
func isResolving(rate float64) bool { return math.Float64bits(rate) == resolvingBits }

// b2u is 1 for true and 0 for false, without a branch.
func b2u(b bool) uint64 {
	var u uint64
	if b {
		u = 1
	}
	return u
}

// flowOwner learns when its flow has carried all its work.
type flowOwner interface {
	flowDone(f *flow)
}

// flow is an activity with an amount of work sharing resources.
type flow struct {
	// While the flow is registered with the solver, its slot holds its
	// rate, remaining work and last instead.
	ev        Event
	remaining float64
	rate      float64
	last      Time    // when remaining was last brought up to date
	amount    float64 // total work
	// noEnd marks a flow that never completes by itself (a collective's
	// presence on the SMs); it is cancelled.
	noEnd      bool
	active     bool
	registered bool  // in its resources' slot lists, as solver slot slot
	slot       int32 // valid while registered
	// uses are its resources; the solver copies them (see slot) and never
	// writes them, so flows may share one list.
	uses  []use
	bound float64 // rate bound, units per second; +Inf for none
	s     *solver
	owner flowOwner
	// grp is the processor-sharing group the flow runs in, if any; base is
	// its speed with a core of its own.
	grp    *group
	base   float64
	grpPos int
}

// Handle is the flow's completion event.
func (f *flow) Handle() { f.s.finish(f) }

// group is a processor-sharing pool: a host's cores. Each of its n flows
// gets min(1, cores/n) of its base speed; zero cores means one per flow.
type group struct {
	cores int
	flows []*flow
	// full: every member runs at its base speed (share 1), so that a flow
	// joining (at its base speed) or leaving changes no other's bound.
	full bool
}

func (g *group) share() float64 {
	if g.cores <= 0 || len(g.flows) <= g.cores {
		return 1
	}
	return float64(g.cores) / float64(len(g.flows))
}

// solver holds the resources and the active flows.
type solver struct {
	e     *engine
	res   []resource
	fs    []fillState
	dirty []int
	// sl, slFlow: the registered flows' slots and the flows, by slot
	// number; free, the slot numbers free for reuse.
	sl     []slot
	slFlow []*flow
	slMark []uint64 // the solve that found the slot's flow
	// flowRate is each slot's flow's rate as its resources' scans see it:
	// +Inf while a change to the flow awaits a solve, resolving while a
	// solve re-computes it. One float per flow, not one per use beside
	// each resource's list as it was: a freeze then wrote the rate into a
	// different large array at each resource of the flow and stalled on
	// those stores, where now a scan gathers rates from an array small
	// enough to stay in cache (8 bytes a flow).
	flowRate []float64
	free     []int32
	// busy lists the resources with flows (resource.busyPos is each one's
	// place). Where there are at least globalMin, a solve that visits at
	// least globalAt of them makes the next globalSolves solves visit them
	// all (visitAll); globalAt < 0: never.
	busy       []int32
	globalAt   float64
	globalMin  int
	globalLeft int
	// uses is the slab of the slots' uses; garbage counts the entries of
	// freed slots in it, which a compaction reclaims.
	uses    []ref
	garbage int
	// compactAt is the least garbage that a compaction waits for (a
	// variable for tests).
	compactAt int
	// low is the least rate of a flow removed (or re-bounded) since the last
	// solve; touched, the slots started or re-bounded since.
	low     float64
	touched []int32
	epoch   uint64
	solveEv Event
	solves  uint64
	// oversubscribe breaks the solver for tests (see runOptions).
	oversubscribe bool
	// alones counts the solves that took solveAlone; noAlone turns it off
	// (tests compare the two ways).
	alones  uint64
	noAlone bool

	// scratch
	unfrozen int     // flows of the solve not yet frozen
	level    float64 // the filling's level
	compRes  []int
	comp     []int32 // the slots re-solved
	bounded  []int32
	lq       levelQueue
	spare    []ref // the other slab, for compactions
}

// levelEntry is a resource in the filling queue with the saturation level it
// had when queued. Levels only rise during a filling, so an entry whose level
// is stale is queued again when it reaches the head instead of being fixed
// at every change (lazily).
type levelEntry struct {
	level float64
	res   int
}

func newSolver(e *engine) *solver {
	s := &solver{e: e, low: math.Inf(1), compactAt: 4096, globalAt: 0.9, globalMin: 64}
	s.solveEv.Init(s)
	return s
}

// addResource registers a resource and returns its index.
func (s *solver) addResource(name string, capacity float64, track bool) int {
	s.res = append(s.res, resource{name: name, capacity: capacity, track: track})
	s.fs = append(s.fs, fillState{})
	return len(s.res) - 1
}

// start activates f with the given amount of work; its rate is set at the next
// solve, at the current time.
func (s *solver) start(f *flow, amount float64) {
	if f.active {
		panic("sim: flow started twice")
	}
	f.s = s
	f.ev.Init(f)
	f.amount, f.remaining = amount, amount
	f.rate = 0
	f.last = s.e.now
	f.active = true
	f.registered = false
	if amount <= 0 {
		s.e.at(&f.ev, s.e.now)
		return
	}
	if f.grp != nil {
		f.grpPos = len(f.grp.flows)
		f.grp.flows = append(f.grp.flows, f)
		f.bound = f.base // rebalance sets the shared bound of every member
	}
	if len(f.uses) == 0 {
		if math.IsInf(f.bound, 1) || !(f.bound > 0) {
			panic("sim: flow with no resource and no bound")
		}
		f.rate = f.bound
		s.schedule(f)
	} else {
		sl := s.register(f)
		st := &s.sl[sl]
		us := s.refs(st)
		for i, fu := range f.uses {
			u := &us[i]
			r, x := &s.res[u.res], &s.fs[u.res]
			u.pos = int32(len(r.slots))
			if len(r.slots) == 0 {
				r.busyPos = int32(len(s.busy))
				s.busy = append(s.busy, u.res)
			}
			r.slots = append(r.slots, sl)
			r.coefs = append(r.coefs, fu.coef)
			if fu.coef != 1 {
				x.nonUnit++
			}
			s.markDirty(int(u.res))
		}
		s.flowRate[sl] = math.Inf(1)
		st.touched = true
		s.touched = append(s.touched, sl)
	}
	if f.grp != nil {
		s.rebalance(f.grp)
	}
}

// register gives f a slot, with a copy of its uses in the slab (positions
// unset), and returns the slot number.
func (s *solver) register(f *flow) int32 {
	f.registered = true
	n := int32(len(f.uses))
	if s.garbage >= s.compactAt && s.garbage > len(s.uses)/2 {
		s.compact()
	}
	var sl int32
	if k := len(s.free); k > 0 {
		sl = s.free[k-1]
		s.free = s.free[:k-1]
	} else {
		sl = int32(len(s.sl))
		s.sl = append(s.sl, slot{})
		s.slFlow = append(s.slFlow, nil)
		s.slMark = append(s.slMark, 0)
		s.flowRate = append(s.flowRate, 0)
	}
	f.slot = sl
	s.slFlow[sl] = f
	st := &s.sl[sl]
	st.next, st.rate, st.bound, st.off, st.n = 0, f.rate, f.bound, int32(len(s.uses)), n
	st.remaining, st.last, st.amount, st.qs = f.remaining, f.last, f.amount, -1
	st.touched, st.frozen, st.noEnd = false, false, f.noEnd
	for _, u := range f.uses {
		s.uses = append(s.uses, ref{res: u.res})
	}
	return sl
}

// unregister frees f's slot.
func (s *solver) unregister(f *flow) {
	st := &s.sl[f.slot]
	s.garbage += int(st.n)
	st.n, st.touched = 0, false
	s.flowRate[f.slot] = -1 // below every threshold: visitAll passes it
	s.slFlow[f.slot] = nil
	s.free = append(s.free, f.slot)
	f.registered = false
}

// compact moves the live slots' uses into the spare slab, dropping those
// of freed slots.
func (s *solver) compact() {
	nu := s.spare[:0]
	for i := range s.sl {
		st := &s.sl[i]
		if s.slFlow[i] == nil {
			continue
		}
		off := int32(len(nu))
		nu = append(nu, s.uses[st.off:st.off+st.n]...)
		st.off = off
	}
	s.spare, s.uses = s.uses[:0], nu
	s.garbage = 0
}

// touch marks a registered flow whose bound changes: like removing it and
// adding it again.
func (s *solver) touch(f *flow) {
	st := &s.sl[f.slot]
	st.bound = f.bound
	us := s.refs(st)
	if !st.touched {
		s.low = min(s.low, st.rate)
		st.touched = true
		s.touched = append(s.touched, f.slot)
		s.flowRate[f.slot] = math.Inf(1)
	}
	for _, u := range us {
		s.markDirty(int(u.res))
	}
}

// rebalance gives every flow of g its share of the cores.
func (s *solver) rebalance(g *group) {
	sh := g.share()
	if sh == 1 && g.full {
		return
	}
	g.full = sh == 1
	for _, f := range g.flows {
		b := float64(f.base * sh)
		if b == f.bound {
			continue
		}
		s.advance(f, s.e.now)
		f.bound = b
		if len(f.uses) == 0 {
			f.rate = b
			s.schedule(f)
			continue
		}
		s.touch(f)
	}
}

func (s *solver) markDirty(r int) {
	if !s.res[r].dirty {
		s.res[r].dirty = true
		s.dirty = append(s.dirty, r)
	}
	if !s.solveEv.Queued() {
		s.e.at(&s.solveEv, s.e.now)
	}
}

// finish completes f and tells its owner.
func (s *solver) finish(f *flow) {
	if !f.active {
		return
	}
	s.remove(f, true)
	f.owner.flowDone(f)
}

// cancel ends f without its owner hearing of it.
func (s *solver) cancel(f *flow) {
	if f == nil || !f.active {
		return
	}
	s.remove(f, false)
}

// setBound changes the rate bound of an active flow.
func (s *solver) setBound(f *flow, b float64) {
	if !f.active || f.bound == b {
		return
	}
	s.advance(f, s.e.now)
	f.bound = b
	if !f.registered {
		if len(f.uses) == 0 && f.remaining > 0 {
			f.rate = b // a CPU flow: its bound is its rate
			s.schedule(f)
		}
		return
	}
	s.touch(f)
}

// remove takes f out of its resources and group. Where f completes
// (done), it settles what its resources carried: their loads count rate x
// time, and the completion is rounded to the picosecond, so that the last
// stretch carries up to half a picosecond's worth more or less than the work
// left (0.013 bytes at 26 GB/s; a 256 MiB copy in 2 MiB chunks counted
// 268,435,455 bytes). The difference is added to each resource, times the
// flow's coefficient there.
func (s *solver) remove(f *flow, done bool) {
	s.e.q.Cancel(&f.ev)
	if f.registered {
		st := &s.sl[f.slot]
		us := s.refs(st)
		d := 0.0
		if done {
			d = st.remaining - float64(st.rate*float64(s.e.now-st.last)*1e-12)
		}
		for i := range us {
			u := us[i]
			// A removed use leaves the search below, which may look at
			// this flow's own uses (a flow can use a resource more than
			// once).
			us[i].pos = -1
			r, x := &s.res[u.res], &s.fs[u.res]
			// remove f from r.slots, keeping positions of the moved flow right
			last := int32(len(r.slots) - 1)
			coef := r.coefs[u.pos]
			if coef != 1 {
				x.nonUnit--
			}
			if d != 0 {
				r.used += coef * d
			}
			r.removed += coef * st.rate
			if u.pos != last {
				moved := r.slots[last]
				r.slots[u.pos] = moved
				r.coefs[u.pos] = r.coefs[last]
				ms := &s.sl[moved]
				mu := s.refs(ms)
				for j := range mu {
					if mu[j].res == u.res && mu[j].pos == last {
						mu[j].pos = u.pos
						break
					}
				}
			}
			r.slots = r.slots[:last]
			r.coefs = r.coefs[:last]
			if last == 0 {
				moved := s.busy[len(s.busy)-1]
				s.busy[r.busyPos] = moved
				s.res[moved].busyPos = r.busyPos
				s.busy = s.busy[:len(s.busy)-1]
			}
			s.markDirty(int(u.res))
		}
		if !st.touched {
			s.low = min(s.low, st.rate)
		}
		s.unregister(f) // s.touched skips the slot: it is no longer touched
	}
	if g := f.grp; g != nil && f.amount > 0 {
		last := len(g.flows) - 1
		moved := g.flows[last]
		g.flows[f.grpPos] = moved
		moved.grpPos = f.grpPos
		g.flows[last] = nil
		g.flows = g.flows[:last]
		s.rebalance(g)
	}
	f.remaining = 0
	f.rate = 0
	f.active = false
	f.last = s.e.now
}

// Handle runs a solve: re-computes the rates that the changes since the last
// solve can affect (see the top of this file).
func (s *solver) Handle() {
	if len(s.dirty) == 0 {
		return
	}
	s.solves++
	s.epoch++
	ep := s.epoch
	now := s.e.now
	if s.globalLeft == 0 && !s.oversubscribe && !s.noAlone && s.alone() {
		s.alones++
		s.solveAlone(ep, now)
		return
	}
	s.solve(ep)
	// Flows whose rate changed: bring them up to now at the old rate, then
	// reschedule their completion. The others keep their completion event.
	for _, sl := range s.comp {
		st := &s.sl[sl]
		st.touched = false
		if st.next != st.rate {
			advanceSlot(st, now)
			st.rate = st.next
			s.scheduleSlot(sl)
		}
	}
	for _, ri := range s.compRes {
		r := &s.res[ri]
		load := s.fs[ri].newLoad
		if len(r.slots) == 0 {
			load = 0
		}
		s.setLoad(r, load, now)
	}
}

// alone reports whether every changed resource carries at most one flow,
// a changed one (started or re-bounded), at a level capacity/coefficient
// that is positive and finite: then each changed flow is alone on all its
// resources (a change marks every resource of its flow), and nothing else
// can change. A transfer that follows another over its own link, as a
// collective's steps do, is such a change. It leaves each level in the
// resource's fill state, for solveAlone.
func (s *solver) alone() bool {
	for _, ri := range s.dirty {
		r := &s.res[ri]
		switch len(r.slots) {
		case 0:
		case 1:
			if !s.sl[r.slots[0]].touched {
				return false
			}
			l := r.capacity / r.coefs[0]
			if !(l > 0 && l < math.Inf(1)) {
				return false
			}
			s.fs[ri].rem = l
		default:
			return false
		}
	}
	return true
}

// solveAlone is Handle where alone holds. Progressive filling then freezes
// each changed flow at its bound or at the least level of its resources,
// capacity/coefficient, whichever is less: no other flow shares them. It
// takes the flows in the order solve's search would list them (at the
// first of their resources in the order they changed), so that
// completions are re-timed in the same order.
func (s *solver) solveAlone(ep uint64, now Time) {
	n := 0 // the resources solve would visit
	for _, ri := range s.dirty {
		r := &s.res[ri]
		r.removed = 0
		if !r.dirty || r.mark == ep {
			r.dirty = false
			continue
		}
		r.dirty = false
		r.mark = ep
		n++
		if len(r.slots) == 0 {
			s.setLoad(r, 0, now)
			continue
		}
		sl := r.slots[0]
		if s.slMark[sl] == ep {
			continue // its flow set its load
		}
		s.slMark[sl] = ep
		st := &s.sl[sl]
		us := s.refs(st)
		rate := st.bound
		for _, u := range us {
			rate = min(rate, s.fs[u.res].rem)
		}
		st.touched = false
		st.frozen = true
		st.next = rate
		s.flowRate[sl] = rate
		for _, u := range us {
			y := &s.res[u.res]
			s.setLoad(y, y.coefs[0]*rate, now)
		}
		if rate != st.rate {
			advanceSlot(st, now)
			st.rate = rate
			s.scheduleSlot(sl)
		}
	}
	s.dirty = s.dirty[:0]
	s.touched = s.touched[:0]
	s.low = math.Inf(1)
	s.comp = s.comp[:0]
	s.compRes = s.compRes[:0]
	s.checkGlobal(n)
}

// checkGlobal makes the next globalSolves solves visit every resource
// where this one's search reached most of them (visited resources):
// finding what a change reaches then costs more than it saves.
func (s *solver) checkGlobal(visited int) {
	if n := len(s.busy); n >= s.globalMin && s.globalAt >= 0 && float64(visited) >= s.globalAt*float64(n) {
		s.globalLeft = globalSolves
	}
}

// solve re-computes the rates of the flows that the pending changes can
// affect, into their slots' next, and lists them in s.comp and the
// resources whose loads they set in s.compRes.
func (s *solver) solve(ep uint64) {
	// L0: the least rate a pending change can leave unaffected below it.
	l0 := s.low
	for _, sl := range s.touched {
		st := &s.sl[sl]
		if !st.touched {
			continue
		}
		l0 = min(l0, st.bound)
		for _, u := range s.refs(st) {
			l0 = min(l0, s.crossing(int(u.res), ep))
		}
	}
	s.touched = s.touched[:0]
	s.low = math.Inf(1)
	// Flows below thr stay frozen; the margin keeps a flow that rounding put
	// a hair below L0 among those re-solved.
	thr := l0 * (1 - 1e-9)
	if !(thr > 0) {
		thr = 0 // every flow is re-solved
	}
	s.compRes = s.compRes[:0]
	s.comp = s.comp[:0]
	if s.globalLeft > 0 {
		s.globalLeft--
		s.visitAll(ep, thr)
	} else {
		s.visit(ep, thr)
		s.checkGlobal(len(s.compRes))
	}
	s.fill()
	if s.unfrozen > 0 || s.oversubscribe {
		for _, sl := range s.comp {
			st := &s.sl[sl]
			if s.oversubscribe {
				st.next *= 1.5
			}
			s.flowRate[sl] = st.next
		}
	}
	if s.oversubscribe {
		for _, ri := range s.compRes {
			s.fs[ri].newLoad = 0
		}
		for _, sl := range s.comp {
			st := &s.sl[sl]
			for _, u := range s.refs(st) {
				y := &s.fs[u.res]
				y.newLoad += s.res[u.res].coefs[u.pos] * st.next
			}
		}
	}
}

// visit finds what a solve re-solves: from the changed resources, every
// flow at thr or above that shares a resource with one found, and every
// resource of those flows (compRes). It marks the found flows resolving
// and sums each visited resource's frozen rates.
func (s *solver) visit(ep uint64, thr float64) {
	for _, ri := range s.dirty {
		if r := &s.res[ri]; r.dirty && r.mark != ep {
			r.mark = ep
			s.compRes = append(s.compRes, ri)
		}
		s.res[ri].dirty = false
		s.res[ri].removed = 0
	}
	s.dirty = s.dirty[:0]
	for i := 0; i < len(s.compRes); i++ {
		s.scan(s.compRes[i], ep, thr)
	}
}

// scan sums resource ri's rates below thr (the flows that stay frozen),
// marks the flows of its entries at thr or above resolving, lists each in
// s.comp the first time it meets it, and queues the flow's resources to be
// visited.
func (s *solver) scan(ri int, ep uint64, thr float64) {
	r, x := &s.res[ri], &s.fs[ri]
	rem, wsum, nUnf, load := r.capacity, 0.0, 0, 0.0
	// Coefficients are read only where some is not 1.
	unit := x.nonUnit == 0
	slots := r.slots
	coefs := r.coefs[:len(slots)]
	rates := s.flowRate
	for k, sl := range slots {
		coef := 1.0
		if !unit {
			coef = coefs[k]
		}
		// A flow another scan of this solve marked is resolving, which
		// is not below thr.
		rate := rates[sl]
		if rate < thr {
			c := coef * rate
			rem -= c
			load += c
			continue
		}
		rates[sl] = resolving
		wsum += coef
		nUnf++
		if s.slMark[sl] != ep {
			// Found: visit its resources.
			s.slMark[sl] = ep
			s.comp = append(s.comp, sl)
			st := &s.sl[sl]
			for _, u := range s.refs(st) {
				if y := &s.res[u.res]; y.mark != ep {
					y.mark = ep
					s.compRes = append(s.compRes, int(u.res))
				}
			}
		}
	}
	x.rem, x.wsum, x.nUnf, x.newLoad = max(rem, 0), wsum, int32(nUnf), load
}

// visitAll is visit without the finding: every flow at thr or above is
// re-solved, connected to a change or not, which gives the same rates (see
// the top of this file: the flows below L0 keep theirs wherever they are).
// It finds them in one pass over the dense rates, by slot, and takes their
// old rates out of their resources' loads: what is left of a load is the
// frozen flows' part, which visit's scans sum entry by entry. Where a
// change reaches most resources, that spares the scans of their lists
// (80,700 entries a solve, against 43,300 uses of the re-solved flows, on
// 1,000 links with 20,000 transfers). A load so kept is a difference, not
// a sum in list order, and where every flow of a resource is re-solved, its
// frozen part is zero exactly.
func (s *solver) visitAll(ep uint64, thr float64) {
	// The changed resources: what removed flows carried leaves their load.
	for _, ri := range s.dirty {
		r, x := &s.res[ri], &s.fs[ri]
		if r.dirty && r.mark != ep {
			r.mark = ep
			x.wsum, x.nUnf, x.newLoad = 0, 0, 0
			s.compRes = append(s.compRes, ri)
		}
		r.dirty = false
	}
	s.dirty = s.dirty[:0]
	// The flows at thr or above, by slot, without a branch (freed slots
	// have rate -1).
	rates := s.flowRate
	comp := slices.Grow(s.comp[:0], len(rates))[:len(rates)]
	n := 0
	for sl, rate := range rates {
		comp[n] = int32(sl)
		n += int(1 - b2u(rate < thr))
	}
	s.comp = comp[:n]
	// Their old rates leave their resources' loads; what stays is the
	// frozen flows' part.
	for _, sl := range s.comp {
		st := &s.sl[sl]
		rates[sl] = resolving
		old := st.rate
		for _, u := range s.refs(st) {
			r, x := &s.res[u.res], &s.fs[u.res]
			if r.mark != ep {
				r.mark = ep
				x.wsum, x.nUnf, x.newLoad = 0, 0, 0
				s.compRes = append(s.compRes, int(u.res))
			}
			coef := 1.0
			if x.nonUnit != 0 {
				coef = r.coefs[u.pos]
			}
			x.wsum += coef
			x.nUnf++
			x.newLoad += coef * old
		}
	}
	for _, ri := range s.compRes {
		r, x := &s.res[ri], &s.fs[ri]
		below := 0.0
		if int(x.nUnf) < len(r.slots) {
			below = max(r.load-x.newLoad-r.removed, 0)
		}
		r.removed = 0
		x.newLoad = below
		x.rem = max(r.capacity-below, 0)
	}
}

// crossing returns a lower bound of the level at which resource ri would
// saturate if its changed flows (rates +Inf) rose from zero with the
// filling while the others kept their rates: the load at level x is
// sum c*min(rate, x) over the others plus x times the changed flows'
// coefficients. Starting from capacity/(sum of coefficients), each step
// solves for x with the flows below the current x frozen, which stays at or
// below the crossing and rises towards it.
func (s *solver) crossing(ri int, ep uint64) float64 {
	r := &s.res[ri]
	if r.crossMark == ep {
		return r.cross
	}
	r.crossMark = ep
	// Coefficients are read only where some is not 1 (see scan).
	unit := s.fs[ri].nonUnit == 0
	slots := r.slots
	coefs := r.coefs[:len(slots)]
	w := float64(len(slots))
	if !unit {
		w = 0
		for _, c := range coefs {
			w += c
		}
	}
	if w <= 0 {
		r.cross = math.Inf(1)
		return r.cross
	}
	x := r.capacity / w
	for it := 0; it < 4; it++ {
		fixed, wu := 0.0, 0.0
		for k, v := range slots {
			coef := 1.0
			if !unit {
				coef = coefs[k]
			}
			if rate := s.flowRate[v]; rate < x {
				fixed += coef * rate
			} else {
				wu += coef
			}
		}
		nx := (r.capacity - fixed) / wu
		if !(nx > x*(1+1e-3)) {
			x = max(x, nx)
			break
		}
		x = nx
	}
	r.cross = x * (1 - 1e-9)
	return r.cross
}

// fill sets the next rates of the component's flows by progressive filling.
// Invariant: every unfrozen flow runs at the current level; a resource's
// saturation level is rem/wsum; levels only rise.
func (s *solver) fill() {
	s.lq.reset()
	s.bounded = s.bounded[:0]
	s.unfrozen = len(s.comp)
	for _, sl := range s.comp {
		st := &s.sl[sl]
		st.frozen = false
		st.next = 0
		if !math.IsInf(st.bound, 1) {
			s.bounded = append(s.bounded, sl)
		}
	}
	s.sortByBound(s.bounded)
	s.level = 0
	// Where every flow has a bound and none is above the level at which
	// the first resource would saturate, the filling freezes each flow
	// at its bound, in the order of bounds, and no resource saturates:
	// levels only rise, so each stays at or above that first level. The
	// same freezes, in the same order, without the queue: most solves of
	// a collective workload are such (transfers held to their base rate).
	if len(s.bounded) == len(s.comp) && len(s.bounded) > 0 {
		least := math.Inf(1)
		for _, ri := range s.compRes {
			if x := &s.fs[ri]; x.nUnf > 0 {
				least = min(least, x.level())
			}
		}
		if s.sl[s.bounded[len(s.bounded)-1]].bound <= least {
			for _, sl := range s.bounded {
				b := s.sl[sl].bound
				s.level = max(s.level, b)
				s.freeze(sl, b)
			}
			return
		}
	}
	for _, ri := range s.compRes {
		if x := &s.fs[ri]; x.nUnf > 0 {
			s.lq.push(levelEntry{x.level(), ri})
		}
	}
	bi := 0
	// Once every flow is frozen the resources left in the queue have
	// nothing to give: most of a component's resources end that way.
	for s.unfrozen > 0 {
		for bi < len(s.bounded) && s.sl[s.bounded[bi]].frozen {
			bi++
		}
		top, haveRes := s.head()
		haveBound := bi < len(s.bounded)
		if !haveRes && !haveBound {
			return
		}
		if haveBound && (!haveRes || s.sl[s.bounded[bi]].bound <= top.level) {
			sl := s.bounded[bi]
			bi++
			b := s.sl[sl].bound
			s.level = max(s.level, b)
			s.freeze(sl, b)
			continue
		}
		s.lq.take()
		r := &s.res[top.res]
		s.level = max(s.level, top.level)
		if math.IsNaN(s.level) || math.IsInf(s.level, 0) {
			panic("sim: max-min filling reached a non-finite level on " + r.name)
		}
		for _, v := range r.slots {
			if sl := v; isResolving(s.flowRate[sl]) {
				s.freeze(sl, s.level)
			}
		}
	}
}

// freeze fixes the rate of slot sl's flow, in the slot and in flowRate,
// and takes it out of its resources' unfrozen sums.
func (s *solver) freeze(sl int32, rate float64) {
	st := &s.sl[sl]
	st.frozen = true
	st.next = rate
	s.flowRate[sl] = rate
	s.unfrozen--
	for _, u := range s.refs(st) {
		x := &s.fs[u.res]
		coef := 1.0
		if x.nonUnit != 0 {
			coef = s.res[u.res].coefs[u.pos]
		}
		c := float64(coef * rate)
		x.rem -= c
		x.newLoad += c
		if x.rem < 0 {
			x.rem = 0
		}
		x.nUnf--
		if x.nUnf == 0 {
			x.wsum = 0
			continue
		}
		x.wsum -= coef
		if x.wsum <= 0 {
			// Rounding left nothing to share by; recompute exactly.
			x.wsum = 0
			r := &s.res[u.res]
			for k, v := range r.slots {
				if isResolving(s.flowRate[v]) {
					x.wsum += r.coefs[k]
				}
			}
		}
	}
}

// sortByBound orders slots by bound, keeping the component order among
// equals (insertion sort: the bounded flows of a component are few).
func (s *solver) sortByBound(sls []int32) {
	for i := 1; i < len(sls); i++ {
		for j := i; j > 0 && s.sl[sls[j]].bound < s.sl[sls[j-1]].bound; j-- {
			sls[j], sls[j-1] = sls[j-1], sls[j]
		}
	}
}

// head returns the resource that saturates next: one with the least
// current level. Among resources tied at that level it takes them in the
// queue's order, which the order of pushes fixes: any order gives the
// max-min rates, and this one repeats from run to run. (Taking the least
// index first, as a binary heap on (level, index) did, meant sorting the
// ties: on a DGX H100, where many links saturate at the same level, that
// sort was 2.6% of a collective workload's instructions.) It drops
// resources with no unfrozen flow left and queues again those whose level
// rose since they were queued; take removes it.
func (s *solver) head() (levelEntry, bool) {
	q := &s.lq
	for {
		if len(q.b[0]) == 0 && !s.refill() {
			return levelEntry{}, false
		}
		e := q.b[0][len(q.b[0])-1] // all at level q.last
		x := &s.fs[e.res]
		if x.nUnf > 0 {
			l := x.level()
			// A level a rounding error put below the entry's (at most
			// the last minimum's) is the least: it saturates now.
			if !(l > e.level) {
				return levelEntry{l, e.res}, true
			}
			q.take()
			q.push(levelEntry{l, e.res})
			continue
		}
		q.take()
	}
}

// refill moves the entries of the lowest non-empty bucket down, around the
// least of their levels, dropping resources with no unfrozen flow left
// (their count only falls during a filling); false when none is left.
func (s *solver) refill() bool {
	q := &s.lq
	for q.mask != 0 {
		i := bits.TrailingZeros64(q.mask) + 1
		b := q.b[i]
		q.b[i] = b[:0]
		q.mask &^= 1 << (i - 1)
		least, live := ^uint64(0), 0
		for _, e := range b {
			if s.fs[e.res].nUnf > 0 {
				least = min(least, math.Float64bits(e.level))
				b[live] = e
				live++
			}
		}
		if live == 0 {
			continue
		}
		// Every entry of bucket i shares the bits above i-1 with the old
		// last and the new, so they all move to lower buckets (not i: its
		// array is b), and the other buckets stay right.
		q.last = least
		for _, e := range b[:live] {
			j := bits.Len64(math.Float64bits(e.level) ^ least)
			q.b[j] = append(q.b[j], e)
			if j > 0 {
				q.mask |= 1 << (j - 1)
			}
		}
		return true
	}
	return false
}

// levelQueue is the filling's queue of resources by saturation level: a
// radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, 1990) on the bits of the
// level, which orders non-negative float64s as it orders the levels. It
// needs no entry below the last minimum taken, which a filling satisfies:
// levels only rise. Bucket i holds the entries whose level's bits first
// differ from last's at bit i-1 (bucket 0: equal to last). A push is an
// append; an entry moves down a bucket at a time as minima are taken, and
// an entry whose resource has nothing left to give is dropped when its
// bucket is next moved, unseen: most of a filling's entries end so, where
// a binary heap paid a sift for each.
type levelQueue struct {
	last uint64
	mask uint64 // bit i-1: bucket i (1 to 64) is not empty
	b    [65][]levelEntry
}

func (q *levelQueue) reset() {
	q.last = 0
	q.b[0] = q.b[0][:0]
	for m := q.mask; m != 0; m &= m - 1 {
		q.b[bits.TrailingZeros64(m)+1] = q.b[bits.TrailingZeros64(m)+1][:0]
	}
	q.mask = 0
}

// push queues e, whose level must not be below the last minimum taken.
func (q *levelQueue) push(e levelEntry) {
	i := bits.Len64(math.Float64bits(e.level) ^ q.last)
	q.b[i] = append(q.b[i], e)
	if i > 0 {
		q.mask |= 1 << (i - 1)
	}
}

// take removes the head: the last entry of bucket 0.
func (q *levelQueue) take() {
	q.b[0] = q.b[0][:len(q.b[0])-1]
}

// advance brings f's remaining work up to now at its current rate.
func (s *solver) advance(f *flow, now Time) {
	if f.registered {
		advanceSlot(&s.sl[f.slot], now)
		return
	}
	advanceWork(&f.remaining, &f.last, f.rate, now)
}

func (s *solver) setLoad(r *resource, load float64, now Time) {
	if load == r.load {
		return
	}
	prev := r.lastChange
	if r.load > 0 {
		// What a resource carried is its load integrated over time: every
		// change of a flow's rate passes through here, so the flows need not
		// count their bytes on every resource.
		r.busy += now - r.lastChange
		r.used += float64(r.load * float64(now-r.lastChange) * 1e-12)
	}
	r.lastChange = now
	r.load = load
	if load > r.peak {
		r.peak = load
	}
	if r.track {
		// The last point of the series is at lastChange: reading it
		// spares a cache miss on the series' tail.
		if prev == now && len(r.series) > 0 {
			r.series[len(r.series)-1].Load = load
		} else {
			r.series = append(r.series, LoadPoint{T: now, Load: load})
		}
	}
}

// advanceSlot is advance for a registered flow.
func advanceSlot(st *slot, now Time) { advanceWork(&st.remaining, &st.last, st.rate, now) }

// advanceWork takes from remaining what rate did between last and now.
func advanceWork(remaining *float64, last *Time, rate float64, now Time) {
	if now == *last {
		return
	}
	done := float64(rate * float64(now-*last) * 1e-12)
	if done > *remaining {
		done = *remaining
	}
	*remaining -= done
	*last = now
}

// scheduleSlot is schedule for the registered flow of slot sl. Where the
// flow's completion event waits in the event queue's heap it moves it there
// (Queue.move), without reading the flow.
func (s *solver) scheduleSlot(sl int32) {
	st := &s.sl[sl]
	if st.rate <= 0 || st.noEnd {
		if st.qs != -1 {
			s.e.q.Cancel(&s.slFlow[sl].ev)
			st.qs = -1
		}
		return
	}
	d, ok := s.completionDelay(st.remaining, st.rate, st.amount, s.slFlow[sl])
	if !ok {
		return
	}
	if d <= MaxTime-s.e.now && st.qs >= 0 {
		s.e.q.move(st.qs, s.e.now+d)
		return
	}
	f := s.slFlow[sl]
	s.e.after(&f.ev, d)
	st.qs = f.ev.slot
}

// schedule (re)schedules f's completion from its rate and remaining work.
func (s *solver) schedule(f *flow) {
	if f.registered {
		s.scheduleSlot(f.slot)
		return
	}
	if f.rate <= 0 || f.noEnd {
		s.e.q.Cancel(&f.ev)
		return
	}
	if d, ok := s.completionDelay(f.remaining, f.rate, f.amount, f); ok {
		s.e.after(&f.ev, d)
	}
}

// completionDelay is how long remaining work takes at rate (> 0), rounded
// to the picosecond but not to zero while more than a billionth of amount
// is left; false, with an error recorded (naming flow f), where that
// overflows the clock.
func (s *solver) completionDelay(remaining, rate, amount float64, f *flow) (Time, bool) {
	ps := remaining / rate * 1e12
	if !(ps < float64(MaxTime-s.e.now)) {
		s.e.overflow(ps, f, rate)
		return 0, false
	}
	d := Time(math.Round(ps))
	if d == 0 && remaining > 0 && remaining > 1e-9*amount {
		d = 1
	}
	return d, true
}

// closeStats ends the busy-time and carried-bytes accounting at time end.
func (s *solver) closeStats(end Time) {
	for i := range s.res {
		r := &s.res[i]
		if r.load > 0 {
			r.busy += end - r.lastChange
			r.used += float64(r.load * float64(end-r.lastChange) * 1e-12)
			r.lastChange = end
		}
	}
}

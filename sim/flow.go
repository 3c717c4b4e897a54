package sim

import (
	"math"
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
// Rates are re-solved whenever a flow starts or ends, but only for the
// resources connected (through shared flows) to the change: the component.
// A solve costs O((R + U) log R) for the R resources and U flow-resource uses
// of the component: resources sit in a heap keyed by the level at which they
// would saturate.
//
// CPU work is processor-shared outside the solver: a group (a host's cores)
// lets each of its n running flows go at min(1, cores/n) of its own speed, by
// setting the flows' bounds.

// LoadPoint is the load of a resource from time T on.
type LoadPoint struct {
	T    Time
	Load float64 // units per second
}

// resource is a shared capacity.
type resource struct {
	name     string
	capacity float64 // units per second
	flows    []*flow // active flows using it
	track    bool    // keep a load series

	load       float64 // current sum of coefficient*rate
	used       float64 // units carried so far
	busy       Time    // time with load > 0
	peak       float64 // largest load seen
	lastChange Time
	series     []LoadPoint

	dirty bool
	mark  uint64
	// filling scratch
	rem     float64 // capacity not yet given to frozen flows
	wsum    float64 // sum of coefficients of unfrozen flows
	nUnf    int     // unfrozen flows
	heapPos int     // position in the filling heap, -1 if absent
}

// level is the filling level at which r saturates.
func (r *resource) level() float64 { return r.rem / r.wsum }

// use is one resource of a flow.
type use struct {
	res  int
	coef float64
	pos  int // position of the flow in the resource's flows
}

// flowOwner learns when its flow has carried all its work.
type flowOwner interface {
	flowDone(f *flow)
}

// flow is an activity with an amount of work sharing resources.
type flow struct {
	uses       []use
	bound      float64 // rate bound, units per second; +Inf for none
	amount     float64 // total work
	remaining  float64
	rate       float64
	last       Time // when remaining was last brought up to date
	active     bool
	registered bool // in its resources' flow lists
	frozen     bool
	mark       uint64
	ev         Event
	s          *solver
	owner      flowOwner
	// grp is the processor-sharing group the flow runs in, if any; base is
	// its speed with a core of its own.
	grp    *group
	base   float64
	grpPos int
	// noEnd marks a flow that never completes by itself (a collective's
	// presence on the SMs); it is cancelled.
	noEnd bool
}

// Handle is the flow's completion event.
func (f *flow) Handle() { f.s.finish(f) }

// group is a processor-sharing pool: a host's cores. Each of its n flows
// gets min(1, cores/n) of its base speed; zero cores means one per flow.
type group struct {
	cores int
	flows []*flow
}

func (g *group) share() float64 {
	if g.cores <= 0 || len(g.flows) <= g.cores {
		return 1
	}
	return float64(g.cores) / float64(len(g.flows))
}

// solver holds the resources and the active flows.
type solver struct {
	e       *engine
	res     []resource
	dirty   []int
	epoch   uint64
	solveEv Event
	solves  uint64
	// oversubscribe breaks the solver for tests (see runOptions).
	oversubscribe bool

	// scratch
	compRes   []int
	compFlows []*flow
	bounded   []*flow
	heap      []int
}

func newSolver(e *engine) *solver {
	s := &solver{e: e}
	s.solveEv.Init(s)
	return s
}

// addResource registers a resource and returns its index.
func (s *solver) addResource(name string, capacity float64, track bool) int {
	s.res = append(s.res, resource{name: name, capacity: capacity, track: track, heapPos: -1})
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
		f.registered = true
		for i := range f.uses {
			u := &f.uses[i]
			r := &s.res[u.res]
			u.pos = len(r.flows)
			r.flows = append(r.flows, f)
			s.markDirty(u.res)
		}
	}
	if f.grp != nil {
		s.rebalance(f.grp)
	}
}

// rebalance gives every flow of g its share of the cores.
func (s *solver) rebalance(g *group) {
	sh := g.share()
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
		for _, u := range f.uses {
			s.markDirty(u.res)
		}
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

// finish completes f: its whole amount counts as carried.
func (s *solver) finish(f *flow) {
	if !f.active {
		return
	}
	s.remove(f, true)
	f.owner.flowDone(f)
}

// cancel ends f without its owner hearing of it; only what it carried counts.
func (s *solver) cancel(f *flow) {
	if f == nil || !f.active {
		return
	}
	s.advance(f, s.e.now)
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
	for _, u := range f.uses {
		s.markDirty(u.res)
	}
}

// remove takes f out of its resources and group; complete says whether the
// rest of its work counts as carried.
func (s *solver) remove(f *flow, complete bool) {
	s.e.q.Cancel(&f.ev)
	for i := range f.uses {
		if !f.registered {
			break
		}
		u := f.uses[i]
		r := &s.res[u.res]
		if complete {
			r.used += float64(u.coef * f.remaining)
		}
		// remove f from r.flows, keeping positions of the moved flow right
		last := len(r.flows) - 1
		if u.pos != last {
			moved := r.flows[last]
			r.flows[u.pos] = moved
			for j := range moved.uses {
				if moved.uses[j].res == u.res && moved.uses[j].pos == last {
					moved.uses[j].pos = u.pos
					break
				}
			}
		}
		r.flows[last] = nil
		r.flows = r.flows[:last]
		s.markDirty(u.res)
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

// Handle runs a solve: re-computes the rates of every component touched since
// the last solve.
func (s *solver) Handle() {
	for len(s.dirty) > 0 {
		r := s.dirty[len(s.dirty)-1]
		s.dirty = s.dirty[:len(s.dirty)-1]
		if !s.res[r].dirty {
			continue
		}
		s.solveComponent(r)
	}
}

// solveComponent re-solves the component that contains resource r0.
func (s *solver) solveComponent(r0 int) {
	s.solves++
	s.epoch++
	ep := s.epoch
	now := s.e.now
	s.compRes = s.compRes[:0]
	s.compFlows = s.compFlows[:0]
	s.res[r0].mark = ep
	s.compRes = append(s.compRes, r0)
	for i := 0; i < len(s.compRes); i++ {
		r := &s.res[s.compRes[i]]
		r.dirty = false
		for _, f := range r.flows {
			if f.mark == ep {
				continue
			}
			f.mark = ep
			s.compFlows = append(s.compFlows, f)
			for _, u := range f.uses {
				if s.res[u.res].mark != ep {
					s.res[u.res].mark = ep
					s.compRes = append(s.compRes, u.res)
				}
			}
		}
	}
	// Bring every flow up to now at its old rate.
	for _, f := range s.compFlows {
		s.advance(f, now)
	}
	s.fill()
	if s.oversubscribe {
		for _, f := range s.compFlows {
			f.rate *= 1.5
		}
	}
	// Loads and statistics.
	for _, ri := range s.compRes {
		s.res[ri].rem = 0 // reused as the new load
	}
	for _, f := range s.compFlows {
		for _, u := range f.uses {
			s.res[u.res].rem += float64(u.coef * f.rate)
		}
	}
	for _, ri := range s.compRes {
		r := &s.res[ri]
		s.setLoad(r, r.rem, now)
	}
	for _, f := range s.compFlows {
		s.schedule(f)
	}
}

// fill sets the rates of the component's flows by progressive filling.
// Invariant: every unfrozen flow runs at the current level; a resource's
// saturation level is rem/wsum; levels only rise.
func (s *solver) fill() {
	s.heap = s.heap[:0]
	for _, ri := range s.compRes {
		r := &s.res[ri]
		r.rem, r.wsum, r.nUnf, r.heapPos = r.capacity, 0, 0, -1
	}
	s.bounded = s.bounded[:0]
	for _, f := range s.compFlows {
		f.frozen = false
		f.rate = 0
		if !math.IsInf(f.bound, 1) {
			s.bounded = append(s.bounded, f)
		}
		for _, u := range f.uses {
			r := &s.res[u.res]
			r.wsum += u.coef
			r.nUnf++
		}
	}
	for _, ri := range s.compRes {
		if s.res[ri].nUnf > 0 {
			s.heapPush(ri)
		}
	}
	sortByBound(s.bounded)
	bi := 0
	level := 0.0
	for {
		for bi < len(s.bounded) && s.bounded[bi].frozen {
			bi++
		}
		haveRes, haveBound := len(s.heap) > 0, bi < len(s.bounded)
		if !haveRes && !haveBound {
			return
		}
		if haveBound && (!haveRes || s.bounded[bi].bound <= s.res[s.heap[0]].level()) {
			f := s.bounded[bi]
			bi++
			level = math.Max(level, f.bound)
			s.freeze(f, f.bound)
			continue
		}
		ri := s.heapPop()
		r := &s.res[ri]
		level = math.Max(level, r.level())
		if math.IsNaN(level) || math.IsInf(level, 0) {
			panic("sim: max-min filling reached a non-finite level on " + r.name)
		}
		for _, f := range r.flows {
			if !f.frozen {
				s.freeze(f, level)
			}
		}
	}
}

// freeze fixes f's rate and takes it out of its resources' unfrozen sums.
func (s *solver) freeze(f *flow, rate float64) {
	f.frozen = true
	f.rate = rate
	for _, u := range f.uses {
		r := &s.res[u.res]
		r.rem -= float64(u.coef * rate)
		if r.rem < 0 {
			r.rem = 0
		}
		r.nUnf--
		if r.nUnf == 0 {
			r.wsum = 0
			if r.heapPos >= 0 {
				s.heapRemove(u.res)
			}
			continue
		}
		r.wsum -= u.coef
		if r.wsum <= 0 {
			// Rounding left nothing to share by; recompute exactly.
			r.wsum = 0
			for _, g := range r.flows {
				if !g.frozen {
					for _, v := range g.uses {
						if v.res == u.res {
							r.wsum += v.coef
						}
					}
				}
			}
		}
		if r.heapPos >= 0 {
			s.heapFix(r.heapPos)
		}
	}
}

// sortByBound orders flows by bound, keeping the component order among equals
// (insertion sort: the bounded flows of a component are few).
func sortByBound(fs []*flow) {
	for i := 1; i < len(fs); i++ {
		for j := i; j > 0 && fs[j].bound < fs[j-1].bound; j-- {
			fs[j], fs[j-1] = fs[j-1], fs[j]
		}
	}
}

// The filling heap: resource indices ordered by saturation level, then index.
func (s *solver) heapLess(i, j int) bool {
	a, b := &s.res[s.heap[i]], &s.res[s.heap[j]]
	la, lb := a.level(), b.level()
	if la != lb {
		return la < lb
	}
	return s.heap[i] < s.heap[j]
}

func (s *solver) heapSwap(i, j int) {
	s.heap[i], s.heap[j] = s.heap[j], s.heap[i]
	s.res[s.heap[i]].heapPos = i
	s.res[s.heap[j]].heapPos = j
}

func (s *solver) heapPush(ri int) {
	s.res[ri].heapPos = len(s.heap)
	s.heap = append(s.heap, ri)
	s.heapUp(len(s.heap) - 1)
}

func (s *solver) heapPop() int {
	ri := s.heap[0]
	s.heapRemove(ri)
	return ri
}

func (s *solver) heapRemove(ri int) {
	i := s.res[ri].heapPos
	n := len(s.heap) - 1
	if i != n {
		s.heapSwap(i, n)
	}
	s.heap = s.heap[:n]
	s.res[ri].heapPos = -1
	if i != n {
		s.heapFix(i)
	}
}

func (s *solver) heapFix(i int) {
	if !s.heapDown(i) {
		s.heapUp(i)
	}
}

func (s *solver) heapUp(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !s.heapLess(j, i) {
			break
		}
		s.heapSwap(i, j)
		j = i
	}
}

func (s *solver) heapDown(i0 int) bool {
	i, n := i0, len(s.heap)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		j := l
		if r := l + 1; r < n && s.heapLess(r, l) {
			j = r
		}
		if !s.heapLess(j, i) {
			break
		}
		s.heapSwap(i, j)
		i = j
	}
	return i > i0
}

// advance brings f's remaining work up to now at its current rate.
func (s *solver) advance(f *flow, now Time) {
	if now == f.last {
		return
	}
	done := float64(f.rate * float64(now-f.last) * 1e-12)
	if done > f.remaining {
		done = f.remaining
	}
	f.remaining -= done
	for _, u := range f.uses {
		s.res[u.res].used += float64(u.coef * done)
	}
	f.last = now
}

func (s *solver) setLoad(r *resource, load float64, now Time) {
	if load == r.load {
		return
	}
	if r.load > 0 {
		r.busy += now - r.lastChange
	}
	r.lastChange = now
	r.load = load
	if load > r.peak {
		r.peak = load
	}
	if r.track {
		if n := len(r.series); n > 0 && r.series[n-1].T == now {
			r.series[n-1].Load = load
		} else {
			r.series = append(r.series, LoadPoint{T: now, Load: load})
		}
	}
}

// schedule (re)schedules f's completion from its rate and remaining work.
func (s *solver) schedule(f *flow) {
	if f.rate <= 0 || f.noEnd {
		s.e.q.Cancel(&f.ev)
		return
	}
	ps := f.remaining / f.rate * 1e12
	if !(ps < float64(MaxTime-s.e.now)) {
		s.e.overflow(Time(0), ps)
		return
	}
	d := Time(math.Round(ps))
	if d == 0 && f.remaining > 0 && f.remaining > 1e-9*f.amount {
		d = 1
	}
	s.e.after(&f.ev, d)
}

// closeStats ends the busy-time accounting at time end.
func (s *solver) closeStats(end Time) {
	for i := range s.res {
		r := &s.res[i]
		if r.load > 0 {
			r.busy += end - r.lastChange
			r.lastChange = end
		}
	}
}

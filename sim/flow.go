package sim

import (
	"math"
)

// The flow model: every activity that consumes a shared rate (a transfer on
// links and host memory, a kernel on a GPU's SMs, CPU work on a host's cores)
// is a flow with an amount of work, and every shared capacity is a resource.
// A flow uses each of its resources with a coefficient (units of the resource
// per unit of the flow's work) and may have a rate bound of its own. Rates are
// the weighted max-min fair allocation (progressive filling): all unfrozen
// flows rise at the same rate until a resource saturates or a flow reaches its
// bound; those freeze; repeat. With coefficients 1 and no bounds this is
// exactly the max-min fair sharing of SimGrid's CM02 network model; with a
// capacity C, coefficients c_i and bounds 1 it is proportional sharing
// (each gets min(1, C/sum c_i)).
//
// Rates are re-solved whenever a flow starts or ends, but only for the
// resources connected (through shared flows) to the change: the component.

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
	rem   float64 // filling scratch: capacity left
	wsum  float64 // filling scratch: sum of coefficients of unfrozen flows
	nUnf  int     // filling scratch: unfrozen flows
}

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
	tag        int // owner's label (chunk number, ...)
}

// Handle is the flow's completion event.
func (f *flow) Handle() { f.s.finish(f) }

// solver holds the resources and the active flows.
type solver struct {
	e       *engine
	res     []resource
	dirty   []int
	epoch   uint64
	solveEv Event
	solves  uint64

	// scratch
	compRes   []int
	compFlows []*flow
	unfrozen  []*flow
	frozenNow []*flow
}

func newSolver(e *engine) *solver {
	s := &solver{e: e}
	s.solveEv.Init(s)
	return s
}

// addResource registers a resource and returns its index.
func (s *solver) addResource(name string, capacity float64, track bool) int {
	s.res = append(s.res, resource{name: name, capacity: capacity, track: track})
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
	if len(f.uses) == 0 {
		if math.IsInf(f.bound, 1) || !(f.bound > 0) {
			panic("sim: flow with no resource and no bound")
		}
		f.rate = f.bound
		s.schedule(f)
		return
	}
	f.registered = true
	for i := range f.uses {
		u := &f.uses[i]
		r := &s.res[u.res]
		u.pos = len(r.flows)
		r.flows = append(r.flows, f)
		s.markDirty(u.res)
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
	s.e.q.Cancel(&f.ev)
	for i := range f.uses {
		if !f.registered {
			break
		}
		u := f.uses[i]
		r := &s.res[u.res]
		r.used += float64(u.coef * f.remaining)
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
	f.remaining = 0
	f.rate = 0
	f.active = false
	f.last = s.e.now
	f.owner.flowDone(f)
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
	// Progressive filling.
	for _, ri := range s.compRes {
		r := &s.res[ri]
		r.rem, r.wsum, r.nUnf = r.capacity, 0, 0
	}
	s.unfrozen = s.unfrozen[:0]
	for _, f := range s.compFlows {
		f.frozen = false
		s.unfrozen = append(s.unfrozen, f)
		for _, u := range f.uses {
			r := &s.res[u.res]
			r.wsum += u.coef
			r.nUnf++
		}
	}
	for len(s.unfrozen) > 0 {
		level := math.Inf(1)
		for _, ri := range s.compRes {
			r := &s.res[ri]
			if r.nUnf > 0 {
				if v := r.rem / r.wsum; v < level {
					level = v
				}
			}
		}
		for _, f := range s.unfrozen {
			if f.bound < level {
				level = f.bound
			}
		}
		if math.IsInf(level, 1) {
			panic("sim: unbounded flow in the solver")
		}
		if level < 0 {
			level = 0
		}
		// Decide which flows freeze before updating the resources, so that
		// every flow of a saturated resource sees the same saturation test.
		s.frozenNow = s.frozenNow[:0]
		keep := s.unfrozen[:0]
		for _, f := range s.unfrozen {
			freeze := f.bound <= level
			if !freeze {
				for _, u := range f.uses {
					r := &s.res[u.res]
					if r.rem <= float64(level*r.wsum)*(1+1e-12) {
						freeze = true
						break
					}
				}
			}
			if freeze {
				f.frozen = true
				f.rate = math.Min(level, f.bound)
				s.frozenNow = append(s.frozenNow, f)
			} else {
				keep = append(keep, f)
			}
		}
		if len(s.frozenNow) == 0 {
			panic("sim: max-min filling froze no flow")
		}
		for _, f := range s.frozenNow {
			for _, u := range f.uses {
				r := &s.res[u.res]
				r.rem -= float64(u.coef * f.rate)
				if r.rem < 0 {
					r.rem = 0
				}
				r.nUnf--
				if r.nUnf == 0 {
					r.wsum = 0
				} else {
					r.wsum -= u.coef
				}
			}
		}
		s.unfrozen = keep
	}
	// Loads and statistics.
	for _, ri := range s.compRes {
		r := &s.res[ri]
		load := 0.0
		for _, f := range r.flows {
			for _, u := range f.uses {
				if u.res == ri {
					load += float64(u.coef * f.rate)
				}
			}
		}
		s.setLoad(r, load, now)
	}
	for _, f := range s.compFlows {
		s.schedule(f)
	}
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
	if f.rate <= 0 {
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

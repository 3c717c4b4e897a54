package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"
)

// checkMaxMin verifies the defining property of a weighted max-min fair
// allocation, independently of how it was computed: every resource carries
// at most its capacity, and every flow either runs at its own bound or has a
// bottleneck, a saturated resource on which no other flow runs faster.
func checkMaxMin(s *solver, flows []*flow) error {
	const eps = 1e-9
	load := make([]float64, len(s.res))
	for _, f := range flows {
		for _, u := range f.uses {
			load[u.res] += u.coef * f.curRate()
		}
	}
	for i, r := range s.res {
		if load[i] > r.capacity*(1+eps) {
			return fmt.Errorf("resource %d carries %g, over its capacity %g", i, load[i], r.capacity)
		}
	}
	for fi, f := range flows {
		if !(f.curRate() > 0) {
			return fmt.Errorf("flow %d has rate %g", fi, f.curRate())
		}
		if f.curRate() > f.bound*(1+eps) {
			return fmt.Errorf("flow %d has rate %g, above its bound %g", fi, f.curRate(), f.bound)
		}
		if f.curRate() >= f.bound*(1-eps) {
			continue
		}
		ok := false
		for _, u := range f.uses {
			if load[u.res] < s.res[u.res].capacity*(1-eps) {
				continue // not saturated
			}
			fastest := true
			for _, g := range flows {
				for _, v := range g.uses {
					if v.res == u.res && g.curRate() > f.curRate()*(1+eps) {
						fastest = false
					}
				}
			}
			if fastest {
				ok = true
				break
			}
		}
		if !ok {
			return fmt.Errorf("flow %d (rate %g) has no bottleneck and is below its bound %g", fi, f.curRate(), f.bound)
		}
	}
	return nil
}

// checkSlots checks the solver's copy of the live flows' uses: each flow's
// slot holds its uses in order, each at a position where its resource lists
// that slot with the use's coefficient, the solver lists the flow's rate,
// and the resources list nothing else.
func checkSlots(s *solver, live []*flow) error {
	listed := 0
	for fi, f := range live {
		if !f.registered || s.slFlow[f.slot] != f {
			return fmt.Errorf("flow %d: not in its slot", fi)
		}
		st := &s.sl[f.slot]
		if f.ev.Queued() != (st.qs != -1) || st.qs >= 0 && st.qs != f.ev.slot || st.qs <= -2 && f.ev.slot > -2 {
			return fmt.Errorf("flow %d: slot has queue slot %d, its event %d", fi, st.qs, f.ev.slot)
		}
		// A queued completion is due when the slot's remaining work
		// runs out at its rate (to rounding: the work may have been
		// brought up to date since, at the same rate).
		if q := &s.e.q; st.qs != -1 {
			at := q.fat
			if st.qs >= 0 {
				at = q.h[q.pos[st.qs]].at
			}
			want := float64(st.last) + st.remaining/st.rate*1e12
			if math.Abs(float64(at)-want) > 2 {
				return fmt.Errorf("flow %d: its completion is queued at %v, its slot says %.0f ps", fi, at, want)
			}
		}
		if int(st.n) != len(f.uses) {
			return fmt.Errorf("flow %d: slot has %d uses, flow %d", fi, st.n, len(f.uses))
		}
		for j, u := range s.refs(st) {
			if u.res != f.uses[j].res {
				return fmt.Errorf("flow %d use %d: slot has resource %d, flow %d", fi, j, u.res, f.uses[j].res)
			}
			r := &s.res[u.res]
			want := f.slot
			if int(u.pos) >= len(r.slots) || r.slots[u.pos] != want || r.coefs[u.pos] != f.uses[j].coef {
				return fmt.Errorf("flow %d use %d: resource %d does not list slot %d with coefficient %g at %d", fi, j, u.res, f.slot, f.uses[j].coef, u.pos)
			}
		}
		if got := s.flowRate[f.slot]; got != f.curRate() {
			return fmt.Errorf("flow %d: the solver lists rate %g, the flow has %g", fi, got, f.curRate())
		}
		listed += len(f.uses)
	}
	total, nonEmpty := 0, 0
	for i := range s.res {
		total += len(s.res[i].slots)
		nonUnit := int32(0)
		load := 0.0
		for k, v := range s.res[i].slots {
			load += s.res[i].coefs[k] * s.flowRate[v]
			if s.res[i].coefs[k] != 1 {
				nonUnit++
			}
		}
		// visitAll takes what stays frozen from the load kept, less
		// what removed flows carried: the load must stay the sum, and
		// every removal must have been taken.
		if r := &s.res[i]; math.Abs(r.load-load) > 1e-9*math.Max(1, load) || r.removed != 0 {
			return fmt.Errorf("resource %d: load %.12g, its flows' rates sum to %.12g; %g removed not taken out", i, r.load, load, r.removed)
		}
		if nonUnit != s.fs[i].nonUnit || len(s.res[i].coefs) != len(s.res[i].slots) {
			return fmt.Errorf("resource %d: %d slots, %d coefficients of which %d not 1, counted %d", i, len(s.res[i].slots), len(s.res[i].coefs), nonUnit, s.fs[i].nonUnit)
		}
		if len(s.res[i].slots) > 0 {
			nonEmpty++
			if p := s.res[i].busyPos; int(p) >= len(s.busy) || s.busy[p] != int32(i) {
				return fmt.Errorf("resource %d has flows and is not in the busy list at %d", i, p)
			}
		}
	}
	if nonEmpty != len(s.busy) {
		return fmt.Errorf("%d resources have flows, the busy list has %d", nonEmpty, len(s.busy))
	}
	// Each resource's load is what its flows' rates put on it.
	load := make([]float64, len(s.res))
	for _, f := range live {
		for _, u := range f.uses {
			load[u.res] += u.coef * f.curRate()
		}
	}
	for i := range s.res {
		if d := math.Abs(s.res[i].load - load[i]); d > 1e-9*math.Max(1, load[i]) {
			return fmt.Errorf("resource %d has load %g, its flows put %g on it", i, s.res[i].load, load[i])
		}
	}
	if total != listed {
		return fmt.Errorf("resources list %d flow uses, the live flows have %d", total, listed)
	}
	return nil
}

// curRate is f's rate: its slot's while it is registered with the solver.
func (f *flow) curRate() float64 {
	if f.registered {
		return f.s.sl[f.slot].rate
	}
	return f.rate
}

type nopOwner struct{}

func (nopOwner) flowDone(*flow) {}

// randomSolver returns a solver with 1 to maxRes resources of capacities
// uniform in [lo, lo+span), and their number.
func randomSolver(rng *rand.Rand, maxRes int, lo, span float64) (*solver, int) {
	s := newSolver(&engine{})
	nres := 1 + rng.IntN(maxRes)
	for i := 0; i < nres; i++ {
		s.addResource("r", lo+rng.Float64()*span, false)
	}
	return s, nres
}

func TestSolverIsMaxMinFairOnRandomInstances(t *testing.T) {
	for seed := uint64(1); seed <= 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 0))
		s, nres := randomSolver(rng, 12, 1, 100)
		var flows []*flow
		for i := rng.IntN(30) + 1; i > 0; i-- {
			f := &flow{owner: nopOwner{}, bound: math.Inf(1)}
			if rng.IntN(4) == 0 {
				f.bound = 0.5 + rng.Float64()*50
			}
			used := map[int]bool{}
			for j := rng.IntN(4); j >= 0; j-- {
				r := rng.IntN(nres)
				if used[r] {
					continue
				}
				used[r] = true
				coef := 1.0
				if rng.IntN(3) == 0 {
					coef = 0.1 + rng.Float64()*3
				}
				f.uses = append(f.uses, use{res: int32(r), coef: coef})
			}
			s.start(f, 1e9)
			flows = append(flows, f)
		}
		s.Handle()
		if err := checkMaxMin(s, flows); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

// TestSolverFreezesBoundedFlowsAtTheirBounds covers solves where every flow
// has a bound, which skip the filling queue when no bound is above the level
// at which the first resource would saturate: a tie at that level, a bound
// just above it (the queue then saturates the resource), and random
// instances whose bounds fall on either side of their resources' levels.
func TestSolverFreezesBoundedFlowsAtTheirBounds(t *testing.T) {
	for _, c := range []struct {
		name         string
		capacity     float64
		ba, bb       float64 // bounds of two flows on one resource
		wantA, wantB float64 // their max-min rates, by hand
	}{
		{"both below the level", 10, 2, 3, 2, 3},
		{"both at the level (a tie)", 10, 5, 5, 5, 5},
		{"one above the level", 10, 4, 7, 4, 6},
		{"both above the level", 10, 6, 7, 5, 5},
	} {
		var e engine
		s := newSolver(&e)
		r := int32(s.addResource("link", c.capacity, false))
		a := &flow{owner: nopOwner{}, bound: c.ba, uses: []use{{res: r, coef: 1}}}
		b := &flow{owner: nopOwner{}, bound: c.bb, uses: []use{{res: r, coef: 1}}}
		s.start(a, 1e9)
		s.start(b, 1e9)
		s.Handle()
		if a.curRate() != c.wantA || b.curRate() != c.wantB {
			t.Errorf("%s: rates %g, %g; want %g, %g", c.name, a.curRate(), b.curRate(), c.wantA, c.wantB)
		}
		if want := c.wantA + c.wantB; s.res[r].load != want {
			t.Errorf("%s: load %g, want %g", c.name, s.res[r].load, want)
		}
	}
	for seed := uint64(1); seed <= 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		s, nres := randomSolver(rng, 6, 10, 90)
		var flows []*flow
		for i := rng.IntN(12) + 1; i > 0; i-- {
			// Bounds from well below to well above a fair share.
			f := &flow{owner: nopOwner{}, bound: 0.5 + rng.Float64()*rng.Float64()*60}
			for j, r := rng.IntN(2), rng.IntN(nres); j >= 0; j, r = j-1, (r+1)%nres {
				f.uses = append(f.uses, use{res: int32(r), coef: 1})
			}
			s.start(f, 1e9)
			flows = append(flows, f)
		}
		s.Handle()
		if err := checkMaxMin(s, flows); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

// TestSolverSolvesFlowsAloneOnTheirResources covers solves whose changed
// flows each have their resources to themselves, which skip the filling:
// hand-computed rates and loads (a flow gets its bound or the least
// capacity/coefficient of its resources), a flow joining one that did not
// change (no shortcut: the two share), and random sequences of changes
// solved both ways, which must give the same bits.
func TestSolverSolvesFlowsAloneOnTheirResources(t *testing.T) {
	var e engine
	s := newSolver(&e)
	r0 := int32(s.addResource("a", 10, false))
	r1 := int32(s.addResource("b", 6, false))
	r2 := int32(s.addResource("c", 8, false))
	x := &flow{owner: nopOwner{}, bound: math.Inf(1), uses: []use{{res: r0, coef: 1}, {res: r1, coef: 2}}}
	y := &flow{owner: nopOwner{}, bound: 5, uses: []use{{res: r2, coef: 1}}}
	s.start(x, 1e9)
	s.start(y, 1e9)
	s.Handle()
	// x: min(10/1, 6/2) = 3, loading a with 3 and b with 6; y: its bound 5.
	if s.alones != 1 || x.curRate() != 3 || y.curRate() != 5 {
		t.Fatalf("alone solves %d, rates %g and %g; want 1, 3 and 5", s.alones, x.curRate(), y.curRate())
	}
	if s.res[r0].load != 3 || s.res[r1].load != 6 || s.res[r2].load != 5 {
		t.Fatalf("loads %g, %g, %g; want 3, 6, 5", s.res[r0].load, s.res[r1].load, s.res[r2].load)
	}
	// y ends and z follows it on c at once, unbounded: 8, still alone.
	e.now += 1000
	s.cancel(y)
	z := &flow{owner: nopOwner{}, bound: math.Inf(1), uses: []use{{res: r2, coef: 1}}}
	s.start(z, 1e9)
	s.Handle()
	if s.alones != 2 || z.curRate() != 8 || s.res[r2].load != 8 {
		t.Fatalf("alone solves %d, rate %g, load %g; want 2, 8, 8", s.alones, z.curRate(), s.res[r2].load)
	}
	// w joins x on a, which did not change: they share a, x keeps 3 (b
	// holds it there) and w gets the 7 left: a full solve.
	w := &flow{owner: nopOwner{}, bound: math.Inf(1), uses: []use{{res: r0, coef: 1}}}
	s.start(w, 1e9)
	s.Handle()
	if s.alones != 2 || x.curRate() != 3 || w.curRate() != 7 || s.res[r0].load != 10 {
		t.Fatalf("alone solves %d, rates %g and %g, load %g; want 2, 3, 7, 10", s.alones, x.curRate(), w.curRate(), s.res[r0].load)
	}

	var alones, solves uint64
	for seed := uint64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 3))
		var ea, eb engine
		a, b := newSolver(&ea), newSolver(&eb)
		b.noAlone = true
		nres := 10 + rng.IntN(60)
		for i := 0; i < nres; i++ {
			c := []float64{8, 16, 25, 50, 100}[rng.IntN(5)]
			a.addResource("r", c, false)
			b.addResource("r", c, false)
		}
		var la, lb []*flow
		for step := 0; step < 80; step++ {
			ea.now += Time(1 + rng.IntN(1000))
			eb.now = ea.now
			for k := 1 + rng.IntN(3); k > 0; k-- {
				switch op := rng.IntN(10); {
				case op < 5 || len(la) == 0:
					bound := math.Inf(1)
					if rng.IntN(3) == 0 {
						bound = float64(1 + rng.IntN(60))
					}
					var uses []use
					for j, r := rng.IntN(3), rng.IntN(nres); j >= 0; j, r = j-1, (r+1+rng.IntN(3))%nres {
						if slices.ContainsFunc(uses, func(u use) bool { return u.res == int32(r) }) {
							continue
						}
						coef := []float64{1, 1, 0.25, 0.5, 2}[rng.IntN(5)]
						uses = append(uses, use{res: int32(r), coef: coef})
					}
					fa := &flow{owner: nopOwner{}, bound: bound, uses: uses}
					fb := &flow{owner: nopOwner{}, bound: bound, uses: uses}
					a.start(fa, 1e3)
					b.start(fb, 1e3)
					la, lb = append(la, fa), append(lb, fb)
				case op < 9:
					i := rng.IntN(len(la))
					a.cancel(la[i])
					b.cancel(lb[i])
					if op == 8 {
						// Another follows it on the same resources, as a
						// collective's next step does.
						fa := &flow{owner: nopOwner{}, bound: la[i].bound, uses: la[i].uses}
						fb := &flow{owner: nopOwner{}, bound: la[i].bound, uses: la[i].uses}
						a.start(fa, 1e3)
						b.start(fb, 1e3)
						la[i], lb[i] = fa, fb
						continue
					}
					la, lb = slices.Delete(la, i, i+1), slices.Delete(lb, i, i+1)
				default:
					i := rng.IntN(len(la))
					bound := float64(1 + rng.IntN(60))
					a.setBound(la[i], bound)
					b.setBound(lb[i], bound)
				}
			}
			a.Handle()
			b.Handle()
			if err := checkMaxMin(a, la); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
			for i := range la {
				ra, rb := la[i].curRate(), lb[i].curRate()
				if math.Float64bits(ra) != math.Float64bits(rb) {
					t.Fatalf("seed %d step %d: flow %d has rate %v, %v by a full solve", seed, step, i, ra, rb)
				}
			}
			for i := range a.res {
				if a.res[i].load != b.res[i].load {
					t.Fatalf("seed %d step %d: resource %d has load %v, %v by full solves", seed, step, i, a.res[i].load, b.res[i].load)
				}
			}
		}
		if b.alones != 0 {
			t.Fatalf("seed %d: %d solves alone with the shortcut off", seed, b.alones)
		}
		alones, solves = alones+a.alones, solves+a.solves
	}
	// The sequences exercise the shortcut: a fifth of their solves or so.
	if alones < solves/10 {
		t.Errorf("%d of %d solves alone; the test no longer exercises the shortcut", alones, solves)
	}
	t.Logf("%d of %d solves alone", alones, solves)
}

// TestSolverMatchesHandComputedShares pins a weighted case: capacity 1,
// coefficients 1 and 0.25 give both flows rate 1/1.25 (proportional SM sharing).
func TestSolverMatchesHandComputedShares(t *testing.T) {
	var e engine
	s := newSolver(&e)
	r := s.addResource("sms", 1, false)
	a := &flow{owner: nopOwner{}, bound: 1, uses: []use{{res: int32(r), coef: 1}}}
	b := &flow{owner: nopOwner{}, bound: 1, uses: []use{{res: int32(r), coef: 0.25}}}
	s.start(a, 1)
	s.start(b, 1)
	s.Handle()
	if math.Abs(a.curRate()-0.8) > 1e-12 || math.Abs(b.curRate()-0.8) > 1e-12 {
		t.Errorf("rates %g, %g; want 0.8 each", a.curRate(), b.curRate())
	}
}

// TestSolverStaysMaxMinFairUnderChanges starts, cancels and re-bounds flows
// at random, several changes per solve, and checks after every solve that the
// rates are max-min fair and equal to a solve from scratch of the same
// flows: the solver re-solves only what a change can affect, and must not
// get that wrong.
func TestSolverStaysMaxMinFairUnderChanges(t *testing.T) {
	for seed := uint64(1); seed <= 200; seed++ {
		rng := rand.New(rand.NewPCG(seed, 1))
		var e engine
		s := newSolver(&e)
		if seed%2 == 0 {
			s.compactAt = 1 // compact the use slab whenever half is garbage
		}
		switch seed % 3 {
		case 1:
			s.globalAt = -1 // always find what a change reaches (visit)
		case 2:
			s.globalAt, s.globalMin = 0, 0 // mostly re-solve every flow at L0 or above (visitAll)
		}
		nres := 2 + rng.IntN(15)
		caps := make([]float64, nres)
		for i := range caps {
			caps[i] = []float64{8, 16, 25, 50, 100}[rng.IntN(5)]
			s.addResource("r", caps[i], false)
		}
		var live []*flow
		newFlow := func() *flow {
			f := &flow{owner: nopOwner{}, bound: math.Inf(1)}
			if rng.IntN(5) == 0 {
				f.bound = float64(1 + rng.IntN(40))
			}
			used := map[int]bool{}
			for j := rng.IntN(4); j >= 0; j-- {
				r := rng.IntN(nres)
				if used[r] {
					continue
				}
				used[r] = true
				coef := 1.0
				if rng.IntN(4) == 0 {
					coef = []float64{0.25, 0.5, 2}[rng.IntN(3)]
				}
				f.uses = append(f.uses, use{res: int32(r), coef: coef})
			}
			return f
		}
		for step := 0; step < 60; step++ {
			// Time moves on (no flow comes near its end), so that changes
			// bring the flows' remaining work up to date.
			e.now += Time(1 + rng.IntN(1000))
			for k := 1 + rng.IntN(3); k > 0; k-- {
				switch op := rng.IntN(10); {
				case op < 5 || len(live) == 0:
					f := newFlow()
					s.start(f, 1e3)
					live = append(live, f)
				case op < 9:
					i := rng.IntN(len(live))
					s.cancel(live[i])
					live = append(live[:i], live[i+1:]...)
				default:
					f := live[rng.IntN(len(live))]
					b := math.Inf(1)
					if rng.IntN(2) == 0 {
						b = float64(1 + rng.IntN(40))
					}
					s.setBound(f, b)
				}
			}
			s.Handle()
			if e.err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, e.err)
			}
			if err := checkMaxMin(s, live); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
			if err := checkSlots(s, live); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
			// The same flows solved from scratch get the same rates.
			var e2 engine
			s2 := newSolver(&e2)
			for _, c := range caps {
				s2.addResource("r", c, false)
			}
			fresh := make([]*flow, len(live))
			for i, f := range live {
				fresh[i] = &flow{owner: nopOwner{}, bound: f.bound, uses: append([]use(nil), f.uses...)}
				s2.start(fresh[i], 1e12)
			}
			s2.Handle()
			for i, f := range live {
				if d := math.Abs(f.curRate() - fresh[i].curRate()); d > 1e-9*math.Max(1, fresh[i].curRate()) {
					t.Fatalf("seed %d step %d: flow %d has rate %.12g, a solve from scratch gives %.12g", seed, step, i, f.curRate(), fresh[i].curRate())
				}
			}
		}
	}
}

// TestLevelQueueTakesLeastCurrentLevel drives the filling queue as a filling
// does (levels that only rise, resources that run out of unfrozen flows) and
// checks every head against a scan of all the resources: one at the least
// current level.
func TestLevelQueueTakesLeastCurrentLevel(t *testing.T) {
	for seed := uint64(1); seed <= 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		var e engine
		s := newSolver(&e)
		n := 1 + rng.IntN(200)
		// Levels on a coarse grid, so that ties are common, over many octaves.
		levelOf := func() float64 { return float64(1+rng.IntN(50)) * math.Pow(2, float64(rng.IntN(40)-10)) }
		for i := 0; i < n; i++ {
			s.addResource("r", 1, false)
			s.fs[i] = fillState{rem: levelOf(), wsum: 1, nUnf: 1}
			if rng.IntN(8) == 0 {
				s.fs[i].rem = 0 // saturated already: queued at the last level taken
			}
		}
		s.lq.reset()
		for i := 0; i < n; i++ {
			s.lq.push(levelEntry{s.fs[i].level(), i})
		}
		last := 0.0
		for {
			// The reference: the least current level among the resources
			// with something left (any of those tied at it).
			want := -1
			for i := 0; i < n; i++ {
				if s.fs[i].nUnf == 0 {
					continue
				}
				if want < 0 || s.fs[i].level() < s.fs[want].level() {
					want = i
				}
			}
			got, ok := s.head()
			if want < 0 {
				if ok {
					t.Fatalf("seed %d: head %d at %g, want none left", seed, got.res, got.level)
				}
				break
			}
			if !ok || s.fs[got.res].nUnf == 0 || got.level != s.fs[want].level() || s.fs[got.res].level() != got.level {
				t.Fatalf("seed %d: head %d at %g (ok %v), want one at %g such as %d", seed, got.res, got.level, ok, s.fs[want].level(), want)
			}
			want = got.res
			if got.level < last {
				t.Fatalf("seed %d: level %g after %g", seed, got.level, last)
			}
			last = got.level
			s.lq.take()
			s.fs[want].nUnf = 0
			// What freezing the saturated resource's flows does to the
			// others: some run out of flows, some levels rise.
			for k := rng.IntN(4); k > 0; k-- {
				i := rng.IntN(n)
				if rng.IntN(3) == 0 {
					s.fs[i].nUnf = 0
				} else if s.fs[i].nUnf > 0 {
					s.fs[i].rem = max(s.fs[i].rem, last) + float64(rng.IntN(3))*levelOf()
				}
			}
		}
	}
}

// TestSolverRemovesFlowsUsingAResourceThreeTimes: removing a flow updates
// the position of the flow moved into its place, which may be the removed
// flow's own later use of the same resource; with three uses the search
// once found an already removed one (found by a review helper).
func TestSolverRemovesFlowsUsingAResourceThreeTimes(t *testing.T) {
	var e engine
	s := newSolver(&e)
	s.addResource("r", 10, false)
	triple := []use{{res: 0, coef: 1}, {res: 0, coef: 1}, {res: 0, coef: 1}}
	a := &flow{owner: nopOwner{}, bound: math.Inf(1), uses: triple}
	b := &flow{owner: nopOwner{}, bound: math.Inf(1), uses: []use{{res: 0, coef: 1}}}
	c := &flow{owner: nopOwner{}, bound: math.Inf(1), uses: triple}
	for _, f := range []*flow{a, b, c} {
		s.start(f, 1e12)
	}
	s.Handle()
	live := []*flow{a, b, c}
	for _, f := range []*flow{b, a, c} {
		s.cancel(f)
		for i, g := range live {
			if g == f {
				live = append(live[:i], live[i+1:]...)
				break
			}
		}
		s.Handle()
		if err := checkSlots(s, live); err != nil {
			t.Fatal(err)
		}
		// What is left shares the 10 units by coefficient: a flow using
		// the resource three times gets a third of it alone.
		if len(live) == 1 && math.Abs(live[0].curRate()-10.0/3) > 1e-9 {
			t.Fatalf("the flow left has rate %g, want 10/3", live[0].curRate())
		}
	}
}

// TestSolverLayoutKeepsItsCacheLines pins the layouts the solver's comments
// rely on: a resource's scanned fields in its first 64-byte line, what a
// change of load writes in the second, coefficients and series in the
// third; a fill state half a line, a slot one line; refs 8 bytes. (Moving a
// field out of the resource once shifted its second line into the first.)
func TestSolverLayoutKeepsItsCacheLines(t *testing.T) {
	var r resource
	for _, c := range []struct {
		what      string
		got, want uintptr
	}{
		{"resource size", unsafe.Sizeof(r), 192},
		{"resource.load offset (end of line 1)", unsafe.Offsetof(r.load), 48},
		{"resource.used offset (line 2)", unsafe.Offsetof(r.used), 64},
		{"resource.coefs offset (line 3)", unsafe.Offsetof(r.coefs), 128},
		{"fillState size", unsafe.Sizeof(fillState{}), 32},
		{"slot size", unsafe.Sizeof(slot{}), 64},
		{"ref size", unsafe.Sizeof(ref{}), 8},
	} {
		if c.got != c.want {
			t.Errorf("%s %d, want %d", c.what, c.got, c.want)
		}
	}
}

// TestOpKeepsItsSize pins the size of an op: a run holds every op of its
// program (10^6 ops of the scale scenario take 168 MB), and the one-byte
// fields padded to 8 bytes each made it 200.
func TestOpKeepsItsSize(t *testing.T) {
	if got := unsafe.Sizeof(Op{}); got != 168 {
		t.Errorf("an Op is %d bytes, want 168", got)
	}
}

package sim

import (
	"math"
	"slices"
	"strings"
)

// A collective runs as one part per rank, each an op on its rank's stream.
// A part starts when it reaches the head of its stream (its kernel is
// resident and claims SMShare of the GPU's SMs, which slows concurrent
// kernels); the plan's transfers begin StartDelay after the last rank's part
// has started; each transfer starts when its dependencies have ended, waits
// its own delay, then moves its bytes as a flow over the path between its
// GPUs (peer-to-peer, host-staged as NCCL's SHM transport does, or to and
// from an NVSwitch); a rank's part ends when the last transfer it sends or
// receives ends. While the GPUs of a transfer are oversubscribed (kernels'
// claims sum to S > 1), the collective's kernel runs at 1/S of its speed, and
// so does the transfer: its rate is bounded by 1/S of what it could reach alone.

type collState struct {
	r       *run
	op      *Op
	plan    *CollPlan
	ps      *planState
	parts   []*opState
	arrived int
	last    int // rank that arrived last
	began   bool
	startEv Event
	tasks   []taskState // back to the plan's pool when done
	done    int         // tasks ended
	left    []int       // per rank: unfinished tasks that send or receive for it
	// first is the record of the first part issued; spans, when the run
	// records them, the link directions the transfers used and when.
	first int32
	spans []CollLinkSpan
}

// taskState is a task of a running collective: 16 bytes, so that starting
// a collective of thousands of tasks writes little. A task in flight holds
// a taskRun.
type taskState struct {
	pending int32    // dependencies not yet ended
	run     *taskRun // while started and not ended
}

// taskRun is a started task's delay and then its transfer. The run pools
// them: only the tasks in flight hold one.
type taskRun struct {
	c       *collState
	task    int
	running bool // its flow is active
	f       flow
	info    *taskInfo
	delayEv Event
}

// Handle starts the plan once StartDelay has passed.
func (c *collState) Handle() { c.launch() }

// collective returns the running collective op belongs to, creating it when
// its first part is issued. Parts issued by separate ops (one per rank, from
// different threads) meet by op ID.
func (r *run) collective(op *Op) *collState {
	if c, ok := r.colls[op.ID]; ok {
		return c
	}
	c := newCollective(r, op)
	r.colls[op.ID] = c
	return c
}

func newCollective(r *run, op *Op) *collState {
	ps := r.planState(op.Coll)
	c := &collState{r: r, op: op, plan: op.Coll, ps: ps, parts: make([]*opState, len(op.Coll.Ranks)), last: -1, first: -1}
	c.startEv.Init(c)
	c.left = slices.Clone(ps.left)
	return c
}

// takeTasks gives the collective its tasks' storage once every rank is in:
// from the pool of finished instances of the same plan, or one
// allocation; then a copy of the plan's initial states. Not when its
// first part is issued: a host that issues thousands of collectives ahead
// of the GPUs would hold every one's tasks (5,000 ring all-reduces of
// 10,000 tasks over 72 GPUs took 800 MB), where the ones begun are few.
func (c *collState) takeTasks() {
	ps := c.ps
	if n := len(ps.pool); n > 0 {
		c.tasks = ps.pool[n-1]
		ps.pool[n-1] = nil
		ps.pool = ps.pool[:n-1]
	} else {
		c.tasks = make([]taskState, len(ps.init))
	}
	copy(c.tasks, ps.init)
}

// planState is what a run derives from a collective plan once, however
// many ops share the plan.
type planState struct {
	// info is what starting and ending each task reads, one cache line a
	// task; its uses and dependents are ranges of uses and deps.
	info []taskInfo
	uses []use
	deps []int32
	// init is each task's state when the collective starts; left the
	// tasks that send or receive for each rank.
	init []taskState
	left []int
	// pool holds the task storage of finished instances.
	pool [][]taskState
	// comm is the id of the communicator of the plan's GPUs (-1 until a
	// collective of the plan without a named one is issued).
	comm int
	// For link spans (see collState.span): the link directions the tasks
	// cross, and for each use, its direction's index there or -1.
	spanDirs []int32
	spanOf   []int32
	// excess is, for each use, what the task loads the resource with
	// beyond the bytes it puts there (run.excess); nil where no task
	// crosses a link with a kernel coefficient.
	excess []float64
}

// taskInfo is a task of a plan as a run reads it, in 64 bytes: the
// plan's CollTask and the arrays derived from it, one per field, cost a
// collective's task up to ten first-level misses in all (a task runs for
// each of the scale scenario's 30 transfers an op).
type taskInfo struct {
	bytes, bound float64
	base         float64 // data rate it reaches alone (planState)
	delay        Time
	useLo, useHi int32 // its resources: uses[useLo:useHi]
	depLo, depHi int32 // the tasks that depend on it: deps[depLo:depHi]
	src, dst     int32 // GPUs (index into Machine.GPUs), -1 for a switch
	from, to     int32 // ranks, -1 for a switch
	join         bool  // a join (CollTask.IsJoin): ends as its dependencies do
}

func (r *run) planState(plan *CollPlan) *planState {
	if ps, ok := r.plans[plan]; ok {
		return ps
	}
	n := len(plan.Tasks)
	ps := &planState{
		info: make([]taskInfo, n),
		init: make([]taskState, n),
		left: make([]int, len(plan.Ranks)),
		comm: -1,
	}
	// Each task's dependents, counted and then placed in one array.
	for i := range plan.Tasks {
		for _, x := range plan.Tasks[i].Deps {
			ps.info[x].depHi++
		}
	}
	at := int32(0)
	for i := range ps.info {
		k := ps.info[i].depHi
		ps.info[i].depLo, ps.info[i].depHi = at, at
		at += k
	}
	ps.deps = make([]int32, at)
	for i := range plan.Tasks {
		t := &plan.Tasks[i]
		for _, x := range t.Deps {
			ps.deps[ps.info[x].depHi] = int32(i)
			ps.info[x].depHi++
		}
		ti := &ps.info[i]
		ti.useLo = int32(len(ps.uses))
		if t.IsJoin() {
			ti.base = math.Inf(1)
			ti.join = true
		} else {
			ps.uses, ti.base = r.taskUses(plan, t, ps.uses)
		}
		ti.useHi = int32(len(ps.uses))
		ti.bytes, ti.bound, ti.delay = t.Bytes, t.Bound, t.Delay
		ti.from, ti.to = int32(t.From), int32(t.To)
		ps.init[i].pending = int32(len(t.Deps))
		ti.src, ti.dst = -1, -1
		if t.From >= 0 {
			ti.src = int32(plan.Ranks[t.From])
			ps.left[t.From]++
		}
		if t.To >= 0 {
			ti.dst = int32(plan.Ranks[t.To])
			ps.left[t.To]++
		}
	}
	// What a task reaches alone is what it reaches with the plan's own
	// transfers that start together beside it (an all-to-all's to every
	// peer; each ring's first step): on each resource, the load of the
	// tasks without dependencies, or its own where that is more (the sum
	// of its uses: a staged transfer's two legs may cross one link's joint
	// limit both ways); and never past its protocol's bound. The 1/S hold
	// of an oversubscribed GPU applies to that rate (taskRun.bound). Each
	// use of a link whose kernel-driven transfers reach only SMBandwidth
	// also notes the load beyond the task's bytes (ps.excess).
	var roots map[int32]float64
	if n > 1 {
		roots = map[int32]float64{}
		for i := range plan.Tasks {
			if len(plan.Tasks[i].Deps) == 0 {
				for _, u := range ps.uses[ps.info[i].useLo:ps.info[i].useHi] {
					roots[u.res] += u.coef
				}
			}
		}
	}
	for i := range ps.info {
		ti := &ps.info[i]
		us := ps.uses[ti.useLo:ti.useHi]
		for _, u := range us {
			own := 0.0
			for _, v := range us { // a handful of uses
				if v.res == u.res {
					own += v.coef
				}
			}
			if load := max(own, roots[u.res]); load > 0 {
				ti.base = min(ti.base, r.s.res[u.res].capacity/load)
			}
		}
		ti.base = min(ti.base, ti.bound)
		cross := plan.Tasks[i].Crossing
		for k := ti.useLo; k < ti.useHi; k++ {
			u := ps.uses[k]
			if l := r.linkOf(u.res); l >= 0 {
				ex := 0.0
				if kc := r.m.Links[l].KernelCoef(); kc != 1 {
					ex = ti.bytes * u.coef * (1 - 1/kc)
				}
				if cross > 0 {
					ex = ti.bytes * (u.coef - cross)
				}
				if ex > 0 {
					if ps.excess == nil {
						ps.excess = make([]float64, len(ps.uses))
					}
					ps.excess[k] = ex
				}
			}
		}
	}
	if r.spans {
		dirs := int32(2 * len(r.m.Links))
		slot := map[int32]int32{}
		ps.spanOf = make([]int32, len(ps.uses))
		for k, u := range ps.uses {
			ps.spanOf[k] = -1
			if u.res < dirs {
				j, ok := slot[u.res]
				if !ok {
					j = int32(len(ps.spanDirs))
					slot[u.res] = j
					ps.spanDirs = append(ps.spanDirs, u.res)
				}
				ps.spanOf[k] = j
			}
		}
	}
	r.plans[plan] = ps
	return ps
}

// taskUses appends to uses the resources task t of plan loads per data
// byte, and returns them with the data rate the task reaches alone.
func (r *run) taskUses(plan *CollPlan, t *CollTask, uses []use) ([]use, float64) {
	m := r.m
	src, dst := -1, -1
	if t.From >= 0 {
		src = plan.Ranks[t.From]
	}
	if t.To >= 0 {
		dst = plan.Ranks[t.To]
	}
	base := math.Inf(1)
	addRoute := func(rt Route) {
		for _, h := range rt.Hops {
			l := &m.Links[h.Link]
			uses = r.linkUse(uses, h, float64(t.Wire*l.KernelCoef()))
			base = min(base, l.Bandwidth/float64(t.Wire*l.KernelCoef()))
		}
	}
	switch {
	case src < 0:
		addRoute(r.route(t.Switch, m.GPUs[dst].Node))
	case dst < 0:
		addRoute(r.route(m.GPUs[src].Node, t.Switch))
	case src == dst:
		// Within one GPU (a one-rank collective's out-of-place copy): read
		// and write its memory.
		g := r.gpus[src]
		uses = append(uses, use{res: int32(g.memRes), coef: 2})
		base = min(base, m.GPUs[src].MemoryBandwidth/2)
	default:
		p := r.collPath(src, dst)
		switch p.Kind {
		case PathStaged:
			// NCCL's SHM transport: the sender writes into host memory, the
			// receiver reads it, both at once.
			addRoute(p.ToHost)
			addRoute(p.FromHost)
			mem := r.hosts[p.Host].memRes
			uses = append(uses, use{res: int32(mem), coef: 2})
			base = min(base, m.Hosts[p.Host].MemoryBandwidth/2)
		default:
			addRoute(p.Route)
		}
	}
	if t.Reduce && dst >= 0 {
		g := r.gpus[dst]
		uses = append(uses, use{res: int32(g.memRes), coef: 3}) // read both inputs, write the sum
		base = min(base, m.GPUs[dst].MemoryBandwidth/3)
	}
	return uses, base
}

// addPart registers rank's part.
func (c *collState) addPart(rank int, o *opState) {
	if c.first < 0 {
		c.first = int32(o.rec)
	}
	c.parts[rank] = o
	o.coll, o.rank = c, rank
}

// span notes that task ti's transfer starts (or ends) now on the link
// directions it crosses: the first start and the last end of each. A span
// not yet started has Start -1.
func (c *collState) span(ti *taskInfo, end bool) {
	ps, now := c.ps, c.r.e.now
	if c.spans == nil {
		c.spans = make([]CollLinkSpan, len(ps.spanDirs))
		for k, d := range ps.spanDirs {
			c.spans[k] = CollLinkSpan{Rec: c.first, Dir: d, Start: -1}
		}
	}
	for _, k := range ps.spanOf[ti.useLo:ti.useHi] {
		if k < 0 {
			continue // not a link direction
		}
		switch sp := &c.spans[k]; {
		case end:
			sp.End = max(sp.End, now)
		case sp.Start < 0:
			sp.Start, sp.End = now, now
		}
	}
}

// arrive is called when rank's part reaches the head of its stream.
func (c *collState) arrive(rank int) {
	r := c.r
	o := c.parts[rank]
	if len(c.plan.Tasks) == 0 {
		// A call NCCL discards: the part ends here, without the others.
		c.parts[rank] = nil
		if c.arrived++; c.arrived == len(c.parts) && r.colls[c.op.ID] == c {
			delete(r.colls, c.op.ID)
		}
		o.finish()
		return
	}
	g := r.gpus[c.plan.Ranks[rank]]
	o.kuse[0] = use{res: int32(g.smRes), coef: c.plan.SMShare}
	o.kflow = flow{owner: o, bound: 1, noEnd: true, uses: o.kuse[:], ev: Event{slot: -1}}
	o.presence = &o.kflow
	r.s.start(o.presence, math.MaxFloat64)
	g.addClaim(c.plan.SMShare)
	g.colls = append(g.colls, c)
	c.arrived++
	c.last = rank
	if c.arrived < len(c.parts) {
		return
	}
	if r.colls[c.op.ID] == c {
		delete(r.colls, c.op.ID)
	}
	// Every rank is in: the collective's execution begins. Parts that
	// waited for the others record the last arrival's cause as theirs;
	// where that was its thread's issuing it (a rank issued by a thread of
	// its own), the last part itself, so that the critical path goes
	// through that thread rather than the waiting part's own.
	now := r.e.now
	lastRec := c.parts[rank].record()
	for _, p := range c.parts {
		rec := p.record()
		rec.Begin = now
		if p != c.parts[rank] {
			rec.Cause, rec.CauseKind = lastRec.Cause, lastRec.CauseKind
			if lastRec.CauseKind == CauseHost {
				rec.Cause, rec.CauseKind = int32(c.parts[rank].rec), CauseRank
			}
		}
	}
	c.takeTasks()
	c.began = true
	r.e.after(&c.startEv, c.plan.StartDelay)
}

// launch starts every task without dependencies, and ends the parts of
// ranks that have nothing to do. Which tasks those are is read from the
// plan, not from the live counts: a join without dependencies ends as it
// starts, and starts its dependents then.
func (c *collState) launch() {
	for i := range c.ps.init {
		if c.ps.init[i].pending == 0 {
			c.startTask(i)
		}
	}
	for rank, n := range c.left {
		if n == 0 {
			c.endPart(rank)
		}
	}
	c.release()
}

// release returns the tasks' storage to the run's pool once every task has
// ended (every part has then ended too, and nothing refers to the tasks).
func (c *collState) release() {
	if c.done < len(c.tasks) || c.tasks == nil {
		return
	}
	c.ps.pool = append(c.ps.pool, c.tasks)
	c.tasks = nil
	for _, sp := range c.spans {
		if sp.Start >= 0 {
			c.r.res.CollLinks = append(c.r.res.CollLinks, sp)
		}
	}
	c.spans = nil
}

func (c *collState) startTask(i int) {
	if c.ps.info[i].join {
		// A join moves nothing and ends at once, in the event of its last
		// dependency: its dependents start there, in order, as they would
		// had they depended on its dependencies themselves.
		c.ended(i)
		return
	}
	r := c.r
	var tr *taskRun
	if n := len(r.freeRuns); n > 0 {
		tr = r.freeRuns[n-1]
		r.freeRuns[n-1] = nil
		r.freeRuns = r.freeRuns[:n-1]
	} else {
		tr = &taskRun{}
		tr.f.owner = tr
		tr.delayEv.Init(tr)
	}
	tr.c, tr.task, tr.running = c, i, false
	tr.info = &c.ps.info[i]
	c.tasks[i].run = tr
	if d := tr.info.delay; d > 0 {
		r.e.after(&tr.delayEv, d)
		return
	}
	tr.Handle()
}

// Handle starts the task's flow once its delay has passed.
func (tr *taskRun) Handle() {
	ti := tr.info
	tr.f.uses = tr.c.ps.uses[ti.useLo:ti.useHi:ti.useHi]
	tr.f.bound = tr.bound()
	tr.running = true
	if tr.c.r.spans {
		tr.c.span(ti, false)
	}
	tr.c.r.s.start(&tr.f, ti.bytes)
}

// bound is the task's rate bound: its protocol's, and 1/S of its standalone
// rate (taskInfo.base: its route's, shared with the plan's transfers that
// start beside it, within its protocol's bound) while a GPU it touches is
// oversubscribed.
func (tr *taskRun) bound() float64 {
	ti := tr.info
	b := ti.bound
	rho := 1.0
	for _, g := range [2]int32{ti.src, ti.dst} {
		if g >= 0 {
			rho = min(rho, tr.c.r.gpus[g].speed())
		}
	}
	if rho < 1 && !math.IsInf(ti.base, 1) {
		b = min(b, float64(rho*ti.base))
	}
	return b
}

// flowDone ends the task: its dependents may start, and its ranks' parts
// end with their last task. Its run goes back to the pool.
func (tr *taskRun) flowDone(*flow) {
	c, i, ti := tr.c, tr.task, tr.info
	if c.r.spans {
		c.span(ti, true)
	}
	if ex := c.ps.excess; ex != nil {
		r := c.r
		if r.excess == nil {
			r.excess = make([]float64, len(r.s.res))
		}
		for k := ti.useLo; k < ti.useHi; k++ {
			r.excess[c.ps.uses[k].res] += ex[k]
		}
	}
	tr.running = false
	tr.c, tr.info = nil, nil
	c.tasks[i].run = nil
	c.r.freeRuns = append(c.r.freeRuns, tr)
	c.ended(i)
}

// ended ends task i: its dependents may start, and its ranks' parts end
// with their last task.
func (c *collState) ended(i int) {
	ti := &c.ps.info[i]
	for _, d := range c.ps.deps[ti.depLo:ti.depHi] {
		dt := &c.tasks[d]
		dt.pending--
		if dt.pending == 0 {
			c.startTask(int(d))
		}
	}
	for _, rank := range [2]int32{ti.from, ti.to} {
		if rank >= 0 {
			c.left[rank]--
			if c.left[rank] == 0 {
				c.endPart(int(rank))
			}
		}
	}
	c.done++
	c.release()
}

// endPart ends a rank's part: its kernel leaves the SMs.
func (c *collState) endPart(rank int) {
	r := c.r
	o := c.parts[rank]
	if o == nil || o.done {
		return
	}
	g := r.gpus[c.plan.Ranks[rank]]
	r.s.cancel(o.presence)
	for i, x := range g.colls {
		if x == c {
			g.colls = append(g.colls[:i], g.colls[i+1:]...)
			break
		}
	}
	g.addClaim(-c.plan.SMShare)
	o.finish()
	c.parts[rank] = nil // the ended part's state is reused
}

// speed is the fraction of its full speed each kernel on g gets: 1/S when
// the kernels' claims sum to S > 1.
func (g *gpuState) speed() float64 {
	if g.claims <= 1+1e-12 {
		return 1
	}
	return 1 / g.claims
}

// addClaim changes the SM claims on g and re-bounds the running transfers
// of collectives on g.
func (g *gpuState) addClaim(d float64) {
	before := g.speed()
	g.claims += d
	if g.claims < 1e-12 {
		g.claims = 0
	}
	if g.speed() == before {
		return
	}
	for _, c := range g.colls {
		for i := range c.tasks {
			tr := c.tasks[i].run
			if tr != nil && tr.running && (int(tr.info.src) == g.idx || int(tr.info.dst) == g.idx) {
				g.r.s.setBound(&tr.f, tr.bound())
			}
		}
	}
}

// waitingRanks names the GPUs whose parts have not reached the collective.
func (c *collState) waitingRanks() string {
	var names []string
	for i, p := range c.parts {
		g := c.r.m.GPUs[c.plan.Ranks[i]].Name
		switch {
		case p == nil:
			names = append(names, g+" (never issued)")
		case !p.started && p.target != nil && p.stream.q[p.stream.head] == p:
			names = append(names, g+" (op "+p.record().ID+" waits for "+p.target.record().ID+" on its communicator)")
		case !p.started:
			names = append(names, g+" (op "+p.record().ID+" queued behind other work)")
		}
	}
	return strings.Join(names, ", ")
}

package sim

import (
	"math"
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
	tasks   []collTask // back to the plan's pool when done
	done    int        // tasks ended
	left    []int      // per rank: unfinished tasks that send or receive for it
}

type collTask struct {
	c          *collState
	t          *CollTask
	idx        int   // index in the plan's tasks
	pending    int   // dependencies not yet ended
	dependents []int // tasks that depend on this one
	started    bool
	running    bool // its flow is active
	f          flow
	usesBuf    [8]use // the flow's uses, without an allocation for short routes
	delayEv    Event
	base       float64 // data rate it reaches alone, for the SM-contention bound
	src, dst   int     // GPUs (index into Machine.GPUs), -1 for a switch
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
	c := &collState{r: r, op: op, plan: op.Coll, ps: ps, parts: make([]*opState, len(op.Coll.Ranks)), last: -1}
	c.startEv.Init(c)
	c.left = make([]int, len(c.plan.Ranks))
	deps := ps.deps
	// The tasks' storage: from the pool of finished instances of the same
	// plan, or one allocation.
	var arr []collTask
	fresh := false
	if n := len(ps.pool); n > 0 {
		arr = ps.pool[n-1]
		ps.pool[n-1] = nil
		ps.pool = ps.pool[:n-1]
	} else {
		arr = make([]collTask, len(c.plan.Tasks))
		fresh = true
	}
	c.tasks = arr
	for i := range c.plan.Tasks {
		t := &c.plan.Tasks[i]
		ct := &arr[i]
		// Field by field, not ct = collTask{...}: a task is about 500 bytes
		// and a plan has thousands, so clearing them cost seconds over a
		// million-op run. The flow and the delay event of a pooled task are
		// left as its last instance left them: owned by the same task,
		// inactive and unqueued, and Handle and solver.start set the rest.
		ct.c, ct.t, ct.idx, ct.pending, ct.dependents = c, t, i, len(t.Deps), deps[i]
		ct.started, ct.running, ct.base, ct.src, ct.dst = false, false, 0, -1, -1
		if fresh {
			ct.f.owner = ct
			ct.delayEv.Init(ct)
		}
		if t.From >= 0 {
			ct.src = c.plan.Ranks[t.From]
			c.left[t.From]++
		}
		if t.To >= 0 {
			ct.dst = c.plan.Ranks[t.To]
			c.left[t.To]++
		}
	}
	return c
}

// planState is what a run derives from a collective plan once, however
// many ops share the plan.
type planState struct {
	deps [][]int // for each task, the tasks that depend on it
	// uses and base are each task's resources (positions unset) and the data
	// rate it reaches alone.
	uses [][]use
	base []float64
	// pool holds the task storage of finished instances.
	pool [][]collTask
}

func (r *run) planState(plan *CollPlan) *planState {
	if ps, ok := r.plans[plan]; ok {
		return ps
	}
	ps := &planState{
		deps: make([][]int, len(plan.Tasks)),
		uses: make([][]use, len(plan.Tasks)),
		base: make([]float64, len(plan.Tasks)),
	}
	// Every task's uses in one array: ends[i] is where task i's end.
	var all []use
	ends := make([]int, len(plan.Tasks))
	for i := range plan.Tasks {
		t := &plan.Tasks[i]
		for _, x := range t.Deps {
			ps.deps[x] = append(ps.deps[x], i)
		}
		all, ps.base[i] = r.taskUses(plan, t, all)
		ends[i] = len(all)
	}
	from := 0
	for i, end := range ends {
		ps.uses[i] = all[from:end:end]
		from = end
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
			i := 2 * h.Link
			if h.Reverse {
				i++
			}
			uses = append(uses, use{res: int32(i), coef: float64(t.Wire * l.KernelCoef())})
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
	c.parts[rank] = o
	o.coll, o.rank = c, rank
}

// arrive is called when rank's part reaches the head of its stream.
func (c *collState) arrive(rank int) {
	r := c.r
	o := c.parts[rank]
	g := r.gpus[c.plan.Ranks[rank]]
	o.kuse[0] = use{res: int32(g.smRes), coef: c.plan.SMShare}
	o.kflow = flow{owner: o, bound: 1, noEnd: true, uses: o.kuse[:]}
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
	// waited for the others record the last arrival's cause as theirs.
	now := r.e.now
	lastRec := c.parts[rank].record()
	for _, p := range c.parts {
		rec := p.record()
		rec.Begin = now
		if p != c.parts[rank] {
			rec.Cause, rec.CauseKind = lastRec.Cause, lastRec.CauseKind
		}
	}
	c.began = true
	r.e.after(&c.startEv, c.plan.StartDelay)
}

// launch starts every task without dependencies, and ends the parts of
// ranks that have nothing to do.
func (c *collState) launch() {
	for i := range c.tasks {
		if c.tasks[i].pending == 0 {
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
}

func (c *collState) startTask(i int) {
	ct := &c.tasks[i]
	ct.started = true
	if ct.t.Delay > 0 {
		c.r.e.after(&ct.delayEv, ct.t.Delay)
		return
	}
	ct.Handle()
}

// Handle starts the task's flow once its delay has passed.
func (ct *collTask) Handle() {
	ps := ct.c.ps
	ct.base = ps.base[ct.idx]
	ct.f.uses = append(ct.usesBuf[:0], ps.uses[ct.idx]...)
	ct.f.bound = ct.bound()
	ct.running = true
	ct.c.r.s.start(&ct.f, ct.t.Bytes)
}

// bound is the task's rate bound: its protocol's, and 1/S of its standalone
// rate while a GPU it touches is oversubscribed.
func (ct *collTask) bound() float64 {
	b := ct.t.Bound
	rho := 1.0
	for _, g := range [2]int{ct.src, ct.dst} {
		if g >= 0 {
			rho = min(rho, ct.c.r.gpus[g].speed())
		}
	}
	if rho < 1 && !math.IsInf(ct.base, 1) {
		b = min(b, float64(rho*ct.base))
	}
	return b
}

func (ct *collTask) flowDone(*flow) {
	c := ct.c
	ct.running = false
	for _, d := range ct.dependents {
		dt := &c.tasks[d]
		dt.pending--
		if dt.pending == 0 {
			c.startTask(d)
		}
	}
	for _, rank := range [2]int{ct.t.From, ct.t.To} {
		if rank >= 0 {
			c.left[rank]--
			if c.left[rank] == 0 {
				c.endPart(rank)
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
			ct := &c.tasks[i]
			if ct.running && (ct.src == g.idx || ct.dst == g.idx) {
				g.r.s.setBound(&ct.f, ct.bound())
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
		case !p.started:
			names = append(names, g+" (op "+p.record().ID+" queued behind other work)")
		}
	}
	return strings.Join(names, ", ")
}

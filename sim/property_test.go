package sim

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
)

var propCases = flag.Int("sim.props", 300, "random programs to check in TestInvariantsOnRandomPrograms")

// genMachine builds a random valid machine: 1-2 sockets joined by a socket
// link, 1-5 GPUs each reaching its socket directly or through a switch, and
// maybe NVLink between GPUs.
func genMachine(r *rand.Rand) *Machine {
	m := &Machine{Name: "random"}
	bws := []float64{8e9, 16e9, 25e9, 50e9, 100e9, 400e9}
	lat := func() Time { return Time(r.IntN(3)) * Microsecond / 2 }
	nh := 1 + r.IntN(2)
	for i := 0; i < nh; i++ {
		m.AddHost(Host{Name: fmt.Sprintf("cpu%d", i), Cores: r.IntN(4), APIOverhead: Time(r.IntN(4)) * Microsecond,
			MemcpyBandwidth: bws[r.IntN(4)], MemoryBandwidth: bws[1+r.IntN(5)],
			StagingChunk: int64(1+r.IntN(4)) << 20, StagingBuffers: 1 + r.IntN(3), StagingHandoff: Time(r.IntN(3)) * Microsecond}, r.IntN(4) != 0)
	}
	if nh == 2 {
		m.AddLink(Link{A: m.Hosts[0].Node, B: m.Hosts[1].Node, Kind: LinkSocket, Bandwidth: bws[r.IntN(len(bws))], Latency: lat()})
	}
	var switches []int
	for i := r.IntN(3); i > 0; i-- {
		h := r.IntN(nh)
		s := m.AddSwitch(Switch{Name: fmt.Sprintf("sw%d", len(m.Switches)), Kind: "pcie"}, r.IntN(3) != 0)
		m.AddLink(Link{A: m.Switches[s].Node, B: m.Hosts[h].Node, Kind: LinkPCIe, Bandwidth: bws[r.IntN(len(bws))], Latency: lat(), P2P: true})
		switches = append(switches, s)
	}
	ng := 1 + r.IntN(5)
	for i := 0; i < ng; i++ {
		h := r.IntN(nh)
		g := m.AddGPU(GPU{Name: fmt.Sprintf("gpu%d", i), Host: h, CopyEngines: 1 + r.IntN(3),
			CopyOverhead: Time(r.IntN(3)) * Microsecond, MemoryBandwidth: 1e12 + float64(r.IntN(3))*1e12})
		to := m.Hosts[h].Node
		if len(switches) > 0 && r.IntN(2) == 0 {
			to = m.Switches[switches[r.IntN(len(switches))]].Node
		}
		bw := bws[r.IntN(len(bws))]
		m.AddLink(Link{A: m.GPUs[g].Node, B: to, Kind: LinkPCIe, Bandwidth: bw, SMBandwidth: bw * 0.9, Latency: lat(), P2P: true})
	}
	for i := 0; i < ng; i++ {
		for j := i + 1; j < ng; j++ {
			if r.IntN(3) == 0 {
				m.AddLink(Link{A: m.GPUs[i].Node, B: m.GPUs[j].Node, Kind: LinkNVLink, Bandwidth: 100e9, SMBandwidth: 80e9, Latency: lat(), P2P: true})
			}
		}
	}
	return m
}

// genProgram builds a random valid program on m: threads issuing kernels,
// copies of every kind, event records and waits, syncs, host work and
// collectives (issued for all ranks at once, so that none can deadlock).
func genProgram(r *rand.Rand, m *Machine) *Program {
	p := &Program{Name: "random", Events: []string{"e0", "e1", "e2"}}
	stream := func(g int) int {
		name := fmt.Sprintf("s%d", r.IntN(3))
		for i, s := range p.Streams {
			if s.GPU == g && s.Name == name {
				return i
			}
		}
		p.Streams = append(p.Streams, Stream{GPU: g, Name: name})
		return len(p.Streams) - 1
	}
	ng := len(m.GPUs)
	n := 0
	for t := 1 + r.IntN(3); t > 0; t-- {
		th := Thread{Name: fmt.Sprintf("t%d", len(p.Threads)), Host: r.IntN(len(m.Hosts))}
		for k := 5 + r.IntN(25); k > 0; k-- {
			n++
			op := Op{ID: fmt.Sprintf("op%d", n)}
			g := r.IntN(ng)
			switch r.IntN(9) {
			case 0, 1:
				op.Kind, op.Stream = OpKernel, stream(g)
				op.Duration = Time(r.IntN(50)) * Microsecond
				op.SMShare = []float64{1, 0.5, 0.25, 0.1}[r.IntN(4)]
			case 2, 3:
				op.Kind, op.Stream = OpCopy, stream(g)
				op.Bytes = int64(r.IntN(8 << 20))
				gn := m.GPUs[g].Node
				other := m.Hosts[r.IntN(len(m.Hosts))].Node
				if r.IntN(2) == 0 {
					other = m.GPUs[r.IntN(ng)].Node
				}
				op.Src, op.Dst = gn, other
				if r.IntN(2) == 0 {
					op.Src, op.Dst = other, gn
				}
				if m.Nodes[other].Kind == NodeHost && r.IntN(2) == 0 {
					op.Memory = Pageable
				}
				op.NoPeerAccess = m.Nodes[other].Kind == NodeGPU && r.IntN(4) == 0
			case 4:
				op.Kind, op.Stream, op.Event = OpEventRecord, stream(g), r.IntN(3)
			case 5:
				op.Kind, op.Stream, op.Event = OpEventWait, stream(g), r.IntN(3)
			case 6:
				op.Kind = OpSync
				switch r.IntN(3) {
				case 0:
					op.Sync, op.Stream = SyncStream, stream(g)
				case 1:
					op.Sync, op.Event = SyncEvent, r.IntN(3)
				default:
					op.Sync, op.GPU = SyncDevice, g
				}
			case 7:
				op.Kind, op.Duration = OpHost, Time(r.IntN(20))*Microsecond
			case 8:
				op.Kind = OpCollective
				ranks := r.Perm(ng)[:1+r.IntN(ng)]
				plan := &CollPlan{Name: "ring", Ranks: ranks, SMShare: 0.1 + 0.2*r.Float64(), StartDelay: Time(r.IntN(5)) * Microsecond}
				nr := len(ranks)
				steps := 2 * (nr - 1)
				prev := make([]int, nr)
				for s := 0; s < steps; s++ {
					cur := make([]int, nr)
					for pos := 0; pos < nr; pos++ {
						task := CollTask{From: pos, To: (pos + 1) % nr, Switch: -1, Bytes: float64(r.IntN(1 << 20)),
							Wire: 1 + r.Float64(), Bound: math.Inf(1), Delay: Time(r.IntN(3)) * Microsecond, Reduce: s < nr-1}
						if r.IntN(4) == 0 {
							task.Bound = 5e9
						}
						if s > 0 {
							task.Deps = []int{prev[pos]}
						}
						plan.Tasks = append(plan.Tasks, task)
						cur[(pos+1)%nr] = len(plan.Tasks) - 1
					}
					prev = cur
				}
				op.Coll = plan
				for _, g := range ranks {
					op.Streams = append(op.Streams, stream(g))
				}
				op.Stream = op.Streams[0]
			}
			th.Ops = append(th.Ops, op)
		}
		p.Threads = append(p.Threads, th)
	}
	return p
}

// checkInvariants checks the properties every run must have.
func checkInvariants(m *Machine, p *Program, res *Result) error {
	const rel = 1e-9
	// Every op: call <= issued <= start <= end.
	for i := range res.Ops {
		o := &res.Ops[i]
		if !(o.Call <= o.Issued && o.Issued <= o.Start && o.Start <= o.End && o.End <= res.Makespan && o.HostEnd <= res.Makespan) {
			return fmt.Errorf("op %s: call %d issued %d start %d end %d (makespan %d)", o.ID, o.Call, o.Issued, o.Start, o.End, res.Makespan)
		}
		if o.Kind.OnStream() && o.HostEnd < o.Issued {
			return fmt.Errorf("op %s: the call returned at %d before the op was issued at %d", o.ID, o.HostEnd, o.Issued)
		}
	}
	// Streams: FIFO in issue order, never two ops at once.
	byStream := map[int][]*OpRecord{}
	for i := range res.Ops {
		if o := &res.Ops[i]; o.StreamSeq >= 0 {
			byStream[int(o.Stream)] = append(byStream[int(o.Stream)], o)
		}
	}
	for s, ops := range byStream {
		sort.Slice(ops, func(a, b int) bool { return ops[a].StreamSeq < ops[b].StreamSeq })
		for k := 1; k < len(ops); k++ {
			a, b := ops[k-1], ops[k]
			if b.Issued < a.Issued || b.Start < a.End {
				return fmt.Errorf("stream %s: %s (issued %d, %d-%d) and %s (issued %d, %d-%d) break FIFO order", p.StreamName(m, s), a.ID, a.Issued, a.Start, a.End, b.ID, b.Issued, b.Start, b.End)
			}
		}
	}
	// Copy engines: never two copies at once.
	type ce struct{ gpu, engine int }
	byEngine := map[ce][]*OpRecord{}
	for i := range res.Ops {
		if o := &res.Ops[i]; o.Kind == OpCopy {
			byEngine[ce{int(o.GPU), int(o.Engine)}] = append(byEngine[ce{int(o.GPU), int(o.Engine)}], o)
		}
	}
	for k, ops := range byEngine {
		sort.Slice(ops, func(a, b int) bool { return ops[a].Start < ops[b].Start })
		for i := 1; i < len(ops); i++ {
			if ops[i].Start < ops[i-1].End && ops[i].End > ops[i].Start && ops[i-1].End > ops[i-1].Start {
				return fmt.Errorf("copy engine %d of %s runs %s and %s at once", k.engine, m.GPUs[k.gpu].Name, ops[i-1].ID, ops[i].ID)
			}
		}
	}
	// Waits start no earlier than the record they depend on ends.
	for i := range res.Ops {
		o := &res.Ops[i]
		if o.Kind == OpEventWait && o.Target >= 0 && o.Start < res.Ops[o.Target].End {
			return fmt.Errorf("wait %s started at %d before its record %s ended at %d", o.ID, o.Start, res.Ops[o.Target].ID, res.Ops[o.Target].End)
		}
	}
	// Host threads: one op at a time, in program order.
	byThread := map[int][]*OpRecord{}
	for i := range res.Ops {
		o := &res.Ops[i]
		if o.ThreadPrev >= 0 || len(byThread[int(o.Thread)]) == 0 {
			byThread[int(o.Thread)] = append(byThread[int(o.Thread)], o)
		}
	}
	for t, ops := range byThread {
		for k := 1; k < len(ops); k++ {
			if a, b := ops[k-1], ops[k]; a.Kind == OpCollective && b.Kind == OpCollective && a.Call == b.Call && a.HostEnd == b.HostEnd {
				continue // parts of one collective call
			}
			if ops[k].Call < ops[k-1].HostEnd {
				return fmt.Errorf("thread %s: %s was called at %d before %s returned at %d", p.Threads[t].Name, ops[k].ID, ops[k].Call, ops[k-1].ID, ops[k-1].HostEnd)
			}
		}
	}
	// Links and memories never carry more than their capacity.
	check := func(name string, st ResourceStats) error {
		if st.Peak > st.Capacity*(1+rel) {
			return fmt.Errorf("%s peaks at %g B/s, over its %g", name, st.Peak, st.Capacity)
		}
		for _, pt := range st.Series {
			if pt.Load > st.Capacity*(1+rel) {
				return fmt.Errorf("%s carries %g B/s at %d, over its %g", name, pt.Load, pt.T, st.Capacity)
			}
		}
		return nil
	}
	for _, l := range res.Links {
		if err := check(l.Name, l.ResourceStats); err != nil {
			return err
		}
	}
	for _, h := range res.HostMemory {
		if err := check(h.Name, h); err != nil {
			return err
		}
	}
	// Every transfer moves exactly its bytes: what each link direction and
	// host memory carried is what the ops put through them.
	want := expectedTraffic(m, p, res)
	for i, l := range res.Links {
		if w := want[i]; math.Abs(l.Used-w) > 1e-6*math.Max(w, 1)+1e-3 {
			return fmt.Errorf("%s carried %.0f bytes, the ops put %.0f through it", l.Name, l.Used, w)
		}
	}
	for h, hm := range res.HostMemory {
		if w := want[len(res.Links)+h]; math.Abs(hm.Used-w) > 1e-6*math.Max(w, 1)+1e-3 {
			return fmt.Errorf("%s memory carried %.0f bytes, the ops put %.0f through it", m.Hosts[h].Name, hm.Used, w)
		}
	}
	// The makespan is at least the longest chain: each stream's and each
	// thread's own busy time.
	for s, ops := range byStream {
		var busy Time
		for _, o := range ops {
			busy += o.End - o.Start
		}
		if busy > res.Makespan {
			return fmt.Errorf("stream %s is busy %d, longer than the makespan %d", p.StreamName(m, s), busy, res.Makespan)
		}
	}
	// The critical path accounts for the whole makespan.
	var sum Time
	for _, s := range res.CriticalPath {
		sum += s.Time
	}
	if sum != res.Makespan {
		return fmt.Errorf("critical path sums to %d, makespan %d", sum, res.Makespan)
	}
	return nil
}

// expectedTraffic computes, independently of the solver, the bytes each
// link direction (indices as res.Links) and each host memory (after them)
// must carry: every copy's bytes over its path, every collective transfer's
// bytes times its wire and the link's kernel factor.
func expectedTraffic(m *Machine, p *Program, res *Result) []float64 {
	want := make([]float64, len(res.Links)+len(m.Hosts))
	route := func(rt Route, bytes float64, kernel bool) {
		for _, h := range rt.Hops {
			i := 2 * h.Link
			if h.Reverse {
				i++
			}
			c := 1.0
			if kernel {
				c = m.Links[h.Link].KernelCoef()
			}
			want[i] += bytes * c
		}
	}
	mem := func(host int, bytes float64) { want[len(res.Links)+host] += bytes }
	for i := range res.Ops {
		o := &res.Ops[i]
		if o.Kind != OpCopy {
			continue
		}
		b := float64(o.Bytes)
		src, dst := m.Nodes[o.Src], m.Nodes[o.Dst]
		switch o.Copy {
		case CopyH2D, CopyD2H:
			rt, _ := m.Route(int(o.Src), int(o.Dst))
			route(rt, b, false)
			h := src.Index
			if o.Copy == CopyD2H {
				h = dst.Index
			}
			mem(h, b)
			if o.Memory == Pageable {
				mem(h, 2*b)
			}
		case CopyNVLink, CopyP2P:
			route(m.PathBetween(src.Index, dst.Index).Route, b, false)
		case CopyStaged:
			sp := m.StagedPath(src.Index, dst.Index)
			route(sp.ToHost, b, false)
			route(sp.FromHost, b, false)
			mem(sp.Host, 2*b)
		}
	}
	for _, th := range p.Threads {
		for _, op := range th.Ops {
			if op.Kind != OpCollective {
				continue
			}
			for _, t := range op.Coll.Tasks {
				a, b := op.Coll.Ranks[t.From], op.Coll.Ranks[t.To]
				path := m.CollectivePath(a, b)
				wire := t.Bytes * t.Wire
				if path.Kind == PathStaged {
					for _, rt := range []Route{path.ToHost, path.FromHost} {
						for _, h := range rt.Hops {
							i := 2 * h.Link
							if h.Reverse {
								i++
							}
							want[i] += wire * m.Links[h.Link].KernelCoef()
						}
					}
					mem(path.Host, 2*t.Bytes)
					continue
				}
				for _, h := range path.Route.Hops {
					i := 2 * h.Link
					if h.Reverse {
						i++
					}
					want[i] += wire * m.Links[h.Link].KernelCoef()
				}
			}
		}
	}
	return want
}

// TestInvariantsOnRandomPrograms runs random programs on random machines and
// checks every invariant, and that the same input gives the same bytes.
func TestInvariantsOnRandomPrograms(t *testing.T) {
	n := *propCases
	if testing.Short() {
		n = 50
	}
	for seed := uint64(1); seed <= uint64(n); seed++ {
		r := rand.New(rand.NewPCG(seed, 42))
		m := genMachine(r)
		p := genProgram(r, m)
		res, err := Run(m, p)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if err := checkInvariants(m, p, res); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		var a, b bytes.Buffer
		if err := WriteJSON(&a, res); err != nil {
			t.Fatal(err)
		}
		res2, _ := Run(m, p)
		if err := WriteJSON(&b, res2); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("seed %d: two runs of the same input differ", seed)
		}
		// The same with solves that re-solve every flow at L0 or above
		// instead of searching for what a change reaches.
		resG, err := runWith(m, p, runOptions{allGlobal: true})
		if err != nil {
			t.Fatalf("seed %d (all global): %v", seed, err)
		}
		if err := checkInvariants(m, p, resG); err != nil {
			t.Fatalf("seed %d (all global): %v", seed, err)
		}
	}
}

// TestInvariantsCatchABrokenSolver swaps in a solver that oversubscribes
// links and shows that the invariant checks fail.
func TestInvariantsCatchABrokenSolver(t *testing.T) {
	caught := 0
	for seed := uint64(1); seed <= 50; seed++ {
		r := rand.New(rand.NewPCG(seed, 42))
		m := genMachine(r)
		p := genProgram(r, m)
		res, err := runWith(m, p, runOptions{oversubscribe: true})
		if err != nil {
			continue
		}
		if checkInvariants(m, p, res) != nil {
			caught++
		}
	}
	if caught == 0 {
		t.Fatal("the checks passed every run of a solver that oversubscribes links")
	}
	t.Logf("the broken solver failed the checks on %d of 50 programs", caught)
}

// TestOpStateReuseChangesNothing runs random programs with ended ops' states
// reused (as every run does) and with every op's state new, and checks that
// the results are the same bytes.
func TestOpStateReuseChangesNothing(t *testing.T) {
	n := *propCases
	if testing.Short() {
		n = 50
	}
	for seed := uint64(1); seed <= uint64(n); seed++ {
		r := rand.New(rand.NewPCG(seed, 43))
		m := genMachine(r)
		p := genProgram(r, m)
		var out [2]bytes.Buffer
		var errs [2]string
		for i, noReuse := range []bool{false, true} {
			res, err := runWith(m, p, runOptions{noReuse: noReuse})
			if err != nil {
				errs[i] = err.Error()
			}
			if res != nil {
				if err := WriteJSON(&out[i], res); err != nil {
					t.Fatal(err)
				}
			}
		}
		if errs[0] != errs[1] || !bytes.Equal(out[0].Bytes(), out[1].Bytes()) {
			t.Fatalf("seed %d: reusing op states changes the result (errors %q and %q)", seed, errs[0], errs[1])
		}
	}
}

// TestNoLoadSeriesChangesNothingElse runs random programs with and without
// load series and checks that the results are the same bytes, that Run
// records series and that NoLoadSeries records none.
func TestNoLoadSeriesChangesNothingElse(t *testing.T) {
	withSeries := 0
	for seed := uint64(1); seed <= 100; seed++ {
		r := rand.New(rand.NewPCG(seed, 44))
		m := genMachine(r)
		p := genProgram(r, m)
		a, errA := Run(m, p)
		b, errB := RunOptions(m, p, Options{NoLoadSeries: true})
		if (errA == nil) != (errB == nil) {
			t.Fatalf("seed %d: errors %v and %v", seed, errA, errB)
		}
		var ja, jb bytes.Buffer
		if err := WriteJSON(&ja, a); err != nil {
			t.Fatal(err)
		}
		if err := WriteJSON(&jb, b); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ja.Bytes(), jb.Bytes()) {
			t.Fatalf("seed %d: results differ without load series", seed)
		}
		for i := range a.Links {
			if len(a.Links[i].Series) > 0 {
				withSeries++
			}
			if len(b.Links[i].Series) > 0 {
				t.Fatalf("seed %d: link %s has a load series with NoLoadSeries", seed, b.Links[i].Name)
			}
		}
	}
	if withSeries == 0 {
		t.Error("Run recorded no load series on any link of 100 programs")
	}
}

// TestCollectiveTaskFieldsOutOfRange: validation turns away a plan task
// whose bytes, wire factor, bound or delay is out of range, naming the
// field and what would be valid. An infinite wire factor, for one, would
// become NaN in the solver (0 * Inf), and NaN bytes passed the old check.
func TestCollectiveTaskFieldsOutOfRange(t *testing.T) {
	cases := []struct {
		set  func(*CollTask)
		want string
	}{
		{func(c *CollTask) { c.Wire = math.Inf(1) }, "wire +Inf; want a finite factor of at least 1"},
		{func(c *CollTask) { c.Wire = 0.5 }, "wire 0.5; want a finite factor of at least 1"},
		{func(c *CollTask) { c.Bytes = math.NaN() }, "bytes NaN; want a finite number, 0 or more"},
		{func(c *CollTask) { c.Bytes = -1 }, "bytes -1; want a finite number, 0 or more"},
		{func(c *CollTask) { c.Bound = 0 }, "bound 0; want a positive rate, or +Inf for none"},
		{func(c *CollTask) { c.Delay = -5 }, "delay -5; want 0 or more"},
	}
	for _, tc := range cases {
		found := false
		for seed := uint64(1); seed <= 200 && !found; seed++ {
			r := rand.New(rand.NewPCG(seed, 42))
			m := genMachine(r)
			p := genProgram(r, m)
			var plan *CollPlan
			for ti := range p.Threads {
				for oi := range p.Threads[ti].Ops {
					if op := &p.Threads[ti].Ops[oi]; op.Kind == OpCollective && len(op.Coll.Tasks) > 0 {
						plan = op.Coll
					}
				}
			}
			if plan == nil {
				continue
			}
			found = true
			tc.set(&plan.Tasks[0])
			_, err := Run(m, p)
			if err == nil || !strings.Contains(err.Error(), "task 0: "+tc.want) {
				t.Errorf("seed %d: got %v, want an error with %q", seed, err, "task 0: "+tc.want)
			}
		}
		if !found {
			t.Fatal("no random program had a collective with tasks")
		}
	}
}

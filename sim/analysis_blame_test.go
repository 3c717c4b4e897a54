package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// blameMachine is the audit's topology: one host (1 us per call) and two
// GPUs, each with two copy engines (2 us per copy) behind its own 10 GB/s
// link of 1 us latency.
func blameMachine() *Machine {
	m := &Machine{Name: "t1"}
	h := m.AddHost(Host{Name: "cpu0", Cores: 4, APIOverhead: Microsecond, MemoryBandwidth: 1000e9,
		MemcpyBandwidth: 10e9, StagingChunk: 4 << 20, StagingBuffers: 2}, true)
	for i := 0; i < 2; i++ {
		g := m.AddGPU(GPU{Name: fmt.Sprintf("gpu%d", i), Host: h, CopyEngines: 2, CopyOverhead: 2 * Microsecond, MemoryBandwidth: 3e12})
		m.AddLink(Link{A: m.GPUs[g].Node, B: m.Hosts[h].Node, Kind: LinkPCIe, Bandwidth: 10e9, SMBandwidth: 10e9, Latency: Microsecond, P2P: true})
	}
	return m
}

// blameProgram is the audit's scenario: what gpu0/s runs (ops, with
// copyOp and kernelOp), a record of f after it, gpu1/s waiting on f and
// then running a 5 ms kernel, and a device sync on gpu1.
func blameProgram(m *Machine, ops ...Op) *Program {
	p := &Program{Name: "blame", Events: []string{"f"}, Streams: []Stream{{GPU: 0, Name: "s"}, {GPU: 1, Name: "s"}}}
	ops = append(ops,
		Op{ID: "r", Kind: OpEventRecord, Stream: 0, Event: 0},
		Op{ID: "w", Kind: OpEventWait, Stream: 1, Event: 0},
		Op{ID: "k2", Kind: OpKernel, Stream: 1, Duration: 5 * Millisecond, SMShare: 1},
		Op{ID: "sync", Kind: OpSync, Sync: SyncDevice, GPU: 1})
	p.Threads = []Thread{{Name: "main", Ops: ops}}
	return p
}

// copyOp copies 100 MB from cpu0 to gpu0 on gpu0/s: 2 us of copy engine
// overhead, 1 us of latency and 100 MB / 10 GB/s = 10 ms, 10.003 ms in all.
func copyOp(m *Machine) Op {
	return Op{ID: "c", Kind: OpCopy, Stream: 0, Src: m.Hosts[0].Node, Dst: m.GPUs[0].Node, Bytes: 100e6}
}

// kernelOp runs 10 ms on gpu0/s.
var kernelOp = Op{ID: "k", Kind: OpKernel, Stream: 0, Duration: 10 * Millisecond, SMShare: 1}

// TestIdleBlameChangesWithinAStretch: gpu1 waits on gpu0's stream through
// a copy and then a kernel (or the other way round). Its idle time is split
// at the moment the first ends: the copy's part is waiting on data, the
// kernel's waiting on another GPU, in either order. Each call costs the
// host 1 us, so the ops are issued at 1, 2, 3, 4 and 5 us: gpu1 has nothing
// until the wait is issued at 4 us (the host's), and the first op on gpu0
// starts at 1 us.
func TestIdleBlameChangesWithinAStretch(t *testing.T) {
	us := func(x float64) Time { return Time(x * float64(Microsecond)) }
	m := blameMachine()
	for _, tc := range []struct {
		name                 string
		ops                  []Op
		host, data, gpu, all Time
	}{
		// The copy runs 1-10,004 us, then the kernel to 20,004 us: gpu1
		// waits on data from 4 us to 10,004 us, on gpu0 for 10 ms more,
		// then runs k2 for 5 ms.
		{"copy then kernel", []Op{copyOp(m), kernelOp}, us(4), us(10_004 - 4), us(10_000), us(25_004)},
		// The kernel runs 1-10,001 us, then the copy to 20,004 us.
		{"kernel then copy", []Op{kernelOp, copyOp(m)}, us(4), us(10_003), us(10_001 - 4), us(25_004)},
		// Only the copy, 1-10,004 us: what holds gpu1 up never changes,
		// and the split is what one look at the start of the stretch gave
		// (the wait issued at 3 us, k2 at 4).
		{"copy alone", []Op{copyOp(m)}, us(3), us(10_004 - 3), 0, us(15_004)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Run(m, blameProgram(m, tc.ops...))
			if err != nil {
				t.Fatal(err)
			}
			g := res.GPUs[1]
			got := [...]Time{g.IdleHost, g.IdleData, g.IdleGPU, g.IdleInput, g.IdleDone, g.Compute, res.Makespan}
			want := [...]Time{tc.host, tc.data, tc.gpu, 0, 0, 5 * Millisecond, tc.all}
			if got != want {
				t.Errorf("gpu1 idle host, data, other GPU, input, done, compute, makespan:\n got %v\nwant %v", got, want)
			}
			// As shares of the makespan: about 40% each where both run.
			if tc.gpu > 0 {
				d, o := float64(g.IdleData)/float64(res.Makespan), float64(g.IdleGPU)/float64(res.Makespan)
				if d < 0.399 || d > 0.401 || o < 0.399 || o > 0.401 {
					t.Errorf("gpu1 waits on data %.4f, on another GPU %.4f of the makespan; want 0.40 each", d, o)
				}
			}
		})
	}
}

// TestIdleInputChangesWithinAStretch: gpu0's thread does 10 us of host
// work, then awaits an input batch that a loader posts after 30 us, then
// launches a kernel. gpu0 has nothing issued in that time; the host's share
// is the thread's work and calls, the input's the await alone.
func TestIdleInputChangesWithinAStretch(t *testing.T) {
	m := blameMachine()
	p := &Program{Name: "input", Streams: []Stream{{GPU: 0, Name: "s"}},
		Semaphores: []Semaphore{{Name: "batches", Input: true}}}
	p.Threads = []Thread{
		{Name: "main", Ops: []Op{
			{ID: "k0", Kind: OpKernel, Stream: 0, Duration: Microsecond, SMShare: 1},
			{ID: "h", Kind: OpHost, Duration: 10 * Microsecond},
			{ID: "a", Kind: OpAwait, Sem: 0},
			{ID: "k", Kind: OpKernel, Stream: 0, Duration: 5 * Microsecond, SMShare: 1},
		}},
		{Name: "loader", Ops: []Op{
			{ID: "load", Kind: OpHost, Duration: 30 * Microsecond},
			{ID: "post", Kind: OpSignal, Sem: 0, Count: 1},
		}},
	}
	res, err := Run(m, p)
	if err != nil {
		t.Fatal(err)
	}
	// k0 is issued at 1 us and runs to 2 us; h runs 1-11 us; the batch is
	// posted at 30 us (signals cost no API time), the await returns then,
	// and k is issued at 31 us and runs to 36 us. Idle: 0-1 and 2-11 us
	// the host's, 11-30 us the input's, 30-31 us the host's again. (One
	// look at 2 us gave the host all 29 us from 2 to 31.)
	g := res.GPUs[0]
	got := [...]Time{g.IdleHost, g.IdleInput, g.Compute, res.Makespan}
	want := [...]Time{(1 + 9 + 1) * Microsecond, 19 * Microsecond, 6 * Microsecond, 36 * Microsecond}
	if got != want {
		t.Errorf("gpu0 idle host, input, compute, makespan: got %v, want %v", got, want)
	}
}

// TestIdleSplitMatchesAPointByPointReference checks gpuStats on random
// programs (with a data loader feeding some) against a slow reference that
// classifies every span between two consecutive times at which any op is
// called, issued, starts, begins or ends, one look each.
func TestIdleSplitMatchesAPointByPointReference(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 50
	}
	for seed := uint64(1); seed <= uint64(n); seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		m := genMachine(r)
		p := genProgram(r, m)
		if r.IntN(2) == 0 {
			addLoader(r, p)
		}
		res, err := Run(m, p)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for g := range m.GPUs {
			got, want := res.GPUs[g], refGPUStats(res, g)
			got.Kernels, got.Copies, got.Collectives, got.EngineBusy = 0, 0, 0, nil
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("seed %d, gpu%d:\n got %+v\nwant %+v", seed, g, got, want)
			}
		}
	}
}

// addLoader adds an input semaphore, a thread that posts batches on it
// after host work, and awaits of them at random places in thread 0.
func addLoader(r *rand.Rand, p *Program) {
	sem := len(p.Semaphores)
	p.Semaphores = append(p.Semaphores, Semaphore{Name: "batches", Input: true})
	loader := Thread{Name: "loader"}
	ops := p.Threads[0].Ops
	for k := 1 + r.IntN(4); k > 0; k-- {
		loader.Ops = append(loader.Ops,
			Op{ID: fmt.Sprintf("load%d", k), Kind: OpHost, Duration: Time(r.IntN(80)) * Microsecond},
			Op{ID: fmt.Sprintf("post%d", k), Kind: OpSignal, Sem: sem, Count: 1})
		at := r.IntN(len(ops) + 1)
		ops = slices.Insert(ops, at, Op{ID: fmt.Sprintf("await%d", k), Kind: OpAwait, Sem: sem})
	}
	p.Threads[0].Ops = ops
	p.Threads = append(p.Threads, loader)
}

// refGPUStats is gpuStats for GPU g the slow way: every span between two
// consecutive times of any op is classified at its start, with linear
// scans where gpuStats sorts and searches.
func refGPUStats(res *Result, g int) GPUStats {
	st := GPUStats{Name: res.Machine.GPUs[g].Name}
	streamOps := make([][]int, len(res.Program.Streams))
	var mine []int // the GPU's stream ops
	for i := range res.Ops {
		rec := &res.Ops[i]
		if !rec.Kind.OnStream() {
			continue
		}
		if rec.StreamSeq >= 0 {
			s := rec.Stream
			for len(streamOps[s]) <= int(rec.StreamSeq) {
				streamOps[s] = append(streamOps[s], -1)
			}
			streamOps[s][rec.StreamSeq] = i
			if res.Program.Streams[s].GPU == g {
				mine = append(mine, i)
			}
		} else if int(rec.GPU) == g {
			mine = append(mine, i)
		}
	}
	ts := []Time{0, res.Makespan}
	for i := range res.Ops {
		rec := &res.Ops[i]
		ts = append(ts, rec.Call, rec.Issued, rec.Start, rec.Begin, rec.End, rec.HostEnd)
	}
	slices.Sort(ts)
	ts = slices.Compact(ts)
	for k := 0; k+1 < len(ts); k++ {
		t, d := ts[k], ts[k+1]-ts[k]
		if t < 0 || ts[k+1] > res.Makespan {
			continue
		}
		var kernel, comm, cp, collWait bool
		pending, next := -1, -1
		for _, i := range mine {
			rec := &res.Ops[i]
			in := func(a, b Time) bool { return a <= t && t < b }
			switch rec.Kind {
			case OpKernel:
				kernel = kernel || in(rec.Start, rec.End)
			case OpCopy:
				cp = cp || in(rec.Start, rec.End)
			case OpCollective:
				collWait = collWait || in(rec.Start, rec.Begin)
				comm = comm || in(rec.Begin, rec.End)
			}
			// The earliest issued (then first recorded) op issued and
			// not started, and the same of the ops not yet issued.
			if rec.Issued <= t && rec.Start > t && (pending < 0 || rec.Issued < res.Ops[pending].Issued) {
				pending = i
			}
			if rec.Issued > t && (next < 0 || rec.Issued < res.Ops[next].Issued) {
				next = i
			}
		}
		switch {
		case kernel:
			st.Compute += d
		case comm:
			st.Comm += d
		case cp:
			st.Copy += d
		case collWait:
			st.IdleGPU += d
		case pending >= 0:
			switch refBlame(res, streamOps, pending, t, g) {
			case CauseEvent:
				st.IdleGPU += d
			case CauseEngine:
				st.IdleData += d
			default:
				st.IdleHost += d
			}
		case next >= 0:
			if refAwaitingInput(res, next, t) {
				st.IdleInput += d
			} else {
				st.IdleHost += d
			}
		default:
			st.IdleDone += d
		}
	}
	return st
}

// refBlame is blame at the single moment t, finding the op that holds up a
// stream by a scan from its head.
func refBlame(res *Result, streamOps [][]int, i int, t Time, gpu int) CauseKind {
	for {
		rec := &res.Ops[i]
		switch {
		case rec.Issued > t:
			return CauseHost
		case rec.Start <= t && t < rec.End:
			return runningCause(rec, gpu)
		case rec.Start <= t:
			return CauseHost
		}
		held := -1
		for _, j := range streamOps[rec.Stream][:rec.StreamSeq] {
			if res.Ops[j].End > t {
				held = j
				break
			}
		}
		switch {
		case held >= 0:
			i = held
		case (rec.Kind == OpEventWait || rec.Kind == OpCollective) && rec.Target >= 0 && res.Ops[rec.Target].End > t:
			// A wait's record, or a part's predecessor on its communicator.
			i = int(rec.Target)
		case rec.Kind == OpCopy:
			return CauseEngine
		default:
			return CauseHost
		}
	}
}

// refAwaitingInput reports whether, at t, the latest op called by then on
// the thread of op next is an await of an input semaphore not yet over.
func refAwaitingInput(res *Result, next int, t Time) bool {
	for i := next; i >= 0; i = int(res.Ops[i].ThreadPrev) {
		rec := &res.Ops[i]
		if rec.Call <= t {
			return rec.Kind == OpAwait && rec.Sem >= 0 && res.Program.Semaphores[rec.Sem].Input && t < rec.End
		}
	}
	return false
}

// BenchmarkGPUStats times gpuStats alone on a run of about 10^5 ops, GPUs
// in pairs: the even one copies a batch in and runs a kernel on it, the odd
// one waits for that kernel and runs one of its own, so that the odd one's
// idle stretches are each spent first on the copy (data), then on the even
// GPU's kernel (another GPU).
func BenchmarkGPUStats(b *testing.B) {
	m := &Machine{Name: "bench"}
	h := m.AddHost(Host{Name: "cpu0", APIOverhead: Microsecond, MemoryBandwidth: 1000e9,
		MemcpyBandwidth: 10e9, StagingChunk: 4 << 20, StagingBuffers: 2}, true)
	p := &Program{Name: "bench"}
	const ng, iters = 8, 3570
	for g := 0; g < ng; g++ {
		m.AddGPU(GPU{Name: fmt.Sprintf("gpu%d", g), Host: h, CopyEngines: 2, CopyOverhead: Microsecond, MemoryBandwidth: 3e12})
		m.AddLink(Link{A: m.GPUs[g].Node, B: m.Hosts[h].Node, Kind: LinkPCIe, Bandwidth: 25e9, SMBandwidth: 25e9, P2P: true})
		p.Streams = append(p.Streams, Stream{GPU: g, Name: "copy"}, Stream{GPU: g, Name: "compute"})
		p.Events = append(p.Events, fmt.Sprintf("in%d", g), fmt.Sprintf("done%d", g))
	}
	for g := 0; g < ng; g += 2 {
		cs, ks, ko := 2*g, 2*g+1, 2*g+3 // g's copy and compute streams, g+1's compute stream
		in, done := 2*g, 2*g+1
		th := Thread{Name: fmt.Sprintf("t%d", g), Host: h}
		for i := 0; i < iters; i++ {
			th.Ops = append(th.Ops,
				Op{Kind: OpCopy, Stream: cs, Src: m.Hosts[h].Node, Dst: m.GPUs[g].Node, Bytes: int64(1+i%3) << 18},
				Op{Kind: OpEventRecord, Stream: cs, Event: in},
				Op{Kind: OpEventWait, Stream: ks, Event: in},
				Op{Kind: OpKernel, Stream: ks, Duration: Time(5+i%7) * Microsecond, SMShare: 1},
				Op{Kind: OpEventRecord, Stream: ks, Event: done},
				Op{Kind: OpEventWait, Stream: ko, Event: done},
				Op{Kind: OpKernel, Stream: ko, Duration: 3 * Microsecond, SMShare: 1})
		}
		for k := range th.Ops {
			th.Ops[k].ID = fmt.Sprintf("t%d/%d", g, k)
		}
		p.Threads = append(p.Threads, th)
	}
	res, err := Run(m, p)
	if err != nil {
		b.Fatal(err)
	}
	gs := make([]*gpuState, ng)
	for g := range gs {
		gs[g] = &gpuState{ceBusy: res.GPUs[g].EngineBusy}
	}
	sops := make([][]int, len(p.Streams))
	unqueued := make([][]int, ng)
	for i := range res.Ops {
		rec := &res.Ops[i]
		switch {
		case rec.Kind.OnStream() && rec.StreamSeq >= 0:
			sops[rec.Stream] = append(sops[rec.Stream], i)
		case rec.Kind.OnStream():
			unqueued[rec.GPU] = append(unqueued[rec.GPU], i)
		}
	}
	want := fmt.Sprint(res.GPUs)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if got := gpuStats(res, gs, sops, unqueued); i == 0 && fmt.Sprint(got) != want {
			b.Fatalf("gpuStats differs from the run's:\n%v\n%s", got, want)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(res.Ops)), "ns/op-analysed")
}

// A GPU's wait on input counts however many ops its thread calls between
// the await and the GPU's next op (the walk back along the thread once
// stopped after 10^6 ops). gpu0's thread launches k0 (issued at 1 us, runs
// 1-2 us), awaits a batch the loader posts at 30 us, runs n 1-ns host ops,
// then launches k (issued at 31 us + n ns, runs 5 us). gpu0 waits on input
// 2-30 us (28 us) and on its host 0-1 us and 30 us to 31 us + n ns.
func TestIdleInputAfterAMillionThreadOps(t *testing.T) {
	const n = 1_000_000
	m := blameMachine()
	p := &Program{Name: "input", Streams: []Stream{{GPU: 0, Name: "s"}},
		Semaphores: []Semaphore{{Name: "batches", Input: true}}}
	ops := []Op{
		{ID: "k0", Kind: OpKernel, Stream: 0, Duration: Microsecond, SMShare: 1},
		{ID: "a", Kind: OpAwait, Sem: 0},
	}
	for i := 0; i < n; i++ {
		ops = append(ops, Op{ID: fmt.Sprintf("h%d", i), Kind: OpHost, Duration: Nanosecond})
	}
	ops = append(ops, Op{ID: "k", Kind: OpKernel, Stream: 0, Duration: 5 * Microsecond, SMShare: 1})
	p.Threads = []Thread{
		{Name: "main", Ops: ops},
		{Name: "loader", Ops: []Op{
			{ID: "load", Kind: OpHost, Duration: 30 * Microsecond},
			{ID: "post", Kind: OpSignal, Sem: 0, Count: 1},
		}},
	}
	res, err := Run(m, p)
	if err != nil {
		t.Fatal(err)
	}
	g := res.GPUs[0]
	want := [...]Time{2*Microsecond + n*Nanosecond, 28 * Microsecond, 6 * Microsecond, 36*Microsecond + n*Nanosecond}
	if got := [...]Time{g.IdleHost, g.IdleInput, g.Compute, res.Makespan}; got != want {
		t.Errorf("gpu0 idle on host, on input, compute, makespan: %v, want %v", got, want)
	}
}

package sim

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// gpuStats splits each GPU's time into compute, copy and idle by cause, with
// one sweep over the GPU's op boundaries. A stream runs its ops in order, so
// each stream's times come sorted: the sweep's lists are merged from the
// streams' runs, O(n log s) for n ops on s streams. An idle stretch
// between two of those boundaries is split further where what holds the
// GPU up changes (a copy on another GPU ends and a kernel there runs):
// blame and awaitingInput say how long each cause lasts.
// sops holds each stream's records in FIFO order (indexed by StreamSeq),
// unqueued each GPU's stream ops that never reached a stream.
func gpuStats(res *Result, gs []*gpuState, sops, unqueued [][]int) []GPUStats {
	m := res.Machine
	out := make([]GPUStats, len(m.GPUs))
	// Each GPU's streams.
	streamsOf := make([][]int, len(m.GPUs))
	for s, st := range res.Program.Streams {
		streamsOf[st.GPU] = append(streamsOf[st.GPU], s)
	}
	// The lists of the sweep and the merges' scratch, sized for the GPU
	// with the most ops and shared by all.
	most := 0
	for g := range out {
		n := len(unqueued[g])
		for _, s := range streamsOf[g] {
			n += len(sops[s])
		}
		most = max(most, n)
	}
	var threads *threadIndex // awaitingInput's index, built on first use
	tsA, tsB := make([]Time, 0, 2+4*most), make([]Time, 2+4*most)
	issueA, issueB := make([]issuedOp, 0, most), make([]issuedOp, most)
	edgeA, edgeB := make([]gpuEdge, 0, 4*most), make([]gpuEdge, 4*most)
	for g := range out {
		st := &out[g]
		st.Name = m.GPUs[g].Name
		st.EngineBusy = gs[g].ceBusy
		// The GPU's ops as runs: each stream's in FIFO order, then the
		// unqueued ones.
		var runs [][]int
		n := 0
		for _, s := range streamsOf[g] {
			runs = append(runs, sops[s])
			n += len(sops[s])
		}
		runs = append(runs, unqueued[g])
		n += len(unqueued[g])
		type edge = gpuEdge
		ts := append(tsA[:0], 0, res.Makespan)
		tsEnds := []int{2}
		// What the sweep reads of each op, copied from its record in one
		// pass: records are large and scattered, and the sweep meets each
		// op several times.
		byIssue := issueA[:0]
		var issueEnds []int
		edges := edgeA[:0] // +1 at the start of an activity, -1 at its end
		var edgeEnds []int
		var maxIssued Time = -1
		for _, run := range runs {
			// Two runs of times: the run's execution times, then (from
			// byIssue) its issue times.
			from := len(byIssue)
			for _, i := range run {
				rec := &res.Ops[i]
				ts = append(ts, rec.Start)
				maxIssued = max(maxIssued, rec.Issued)
				byIssue = append(byIssue, issuedOp{rec.Issued, rec.Start, i})
				switch rec.Kind {
				case OpKernel:
					st.Kernels++
					if rec.End > rec.Start {
						edges = append(edges, edge{rec.Start, 1, 0}, edge{rec.End, -1, 0})
					}
				case OpCopy:
					st.Copies++
					if rec.End > rec.Start {
						edges = append(edges, edge{rec.Start, 1, 1}, edge{rec.End, -1, 1})
					}
				case OpCollective:
					st.Collectives++
					ts = append(ts, rec.Begin)
					if rec.Begin > rec.Start {
						edges = append(edges, edge{rec.Start, 1, 3}, edge{rec.Begin, -1, 3})
					}
					if rec.End > rec.Begin {
						edges = append(edges, edge{rec.Begin, 1, 2}, edge{rec.End, -1, 2})
					}
				}
				ts = append(ts, rec.End)
			}
			tsEnds = append(tsEnds, len(ts))
			for _, x := range byIssue[from:] {
				ts = append(ts, x.issued)
			}
			tsEnds = append(tsEnds, len(ts))
			issueEnds = append(issueEnds, len(byIssue))
			edgeEnds = append(edgeEnds, len(edges))
		}
		ts = sortTimeRuns(ts, tsEnds, tsB)
		ts = slices.Compact(ts)
		// Ops issued at the same time in record order.
		byIssue = sortRuns(byIssue, issueEnds, issueB, func(a, b issuedOp) int {
			if c := cmp.Compare(a.issued, b.issued); c != 0 {
				return c
			}
			return cmp.Compare(a.rec, b.rec)
		})
		// Edges at the same time are applied together: their order is free.
		edges = sortRuns(edges, edgeEnds, edgeB, func(a, b edge) int { return cmp.Compare(a.t, b.t) })
		var active [4]int
		ei, ii, front := 0, 0, 0
		for k := 0; k+1 < len(ts); k++ {
			t, d := ts[k], ts[k+1]-ts[k]
			for ei < len(edges) && edges[ei].t <= t {
				active[edges[ei].what] += int(edges[ei].delta)
				ei++
			}
			for ii < len(byIssue) && byIssue[ii].issued <= t {
				ii++
			}
			// The earliest-issued op still waiting to start at t.
			for front < ii && byIssue[front].start <= t {
				front++
			}
			pending := -1
			for j := front; j < ii; j++ {
				if byIssue[j].start > t {
					pending = byIssue[j].rec
					break
				}
			}
			switch {
			case active[0] > 0:
				st.Compute += d
			case active[2] > 0:
				st.Comm += d
			case active[1] > 0:
				st.Copy += d
			case active[3] > 0:
				st.IdleGPU += d
			case pending >= 0:
				// What holds the op up may change before it starts (a
				// copy ends and a kernel on another GPU runs): each
				// piece goes to what blocked it then.
				for u, e := t, t+d; u < e; {
					cause, until := blame(res, sops, pending, u, e, g)
					switch cause {
					case CauseEvent:
						st.IdleGPU += until - u
					case CauseEngine:
						st.IdleData += until - u
					default:
						st.IdleHost += until - u
					}
					u = until
				}
			case maxIssued > t:
				input := Time(0)
				if ii < len(byIssue) {
					if threads == nil {
						threads = newThreadIndex(res)
					}
					input = awaitingInput(res, threads, byIssue[ii].rec, t, t+d)
				}
				st.IdleInput += input
				st.IdleHost += d - input
			default:
				st.IdleDone += d
			}
		}
	}
	return out
}

// issuedOp is what gpuStats' sweep reads of an op: its issue and start
// times and its record.
type issuedOp struct {
	issued, start Time
	rec           int
}

// gpuEdge is a change of what runs on a GPU: delta +1 at the start of an
// activity, -1 at its end; what 0 for a kernel, 1 a copy, 2 a collective
// running, 3 a collective waiting for its ranks.
type gpuEdge struct {
	t           Time
	delta, what int8
}

// sortRuns sorts xs, which is made of runs ending at ends, and returns it
// (or a sorted copy): when every run is sorted it merges them pairwise, in
// O(n log runs); otherwise it sorts xs whole. Among equal elements the
// merge keeps the earlier run's first, as a stable sort would. It
// overwrites ends, and uses buf as scratch when it is long enough.
func sortRuns[T any](xs []T, ends []int, buf []T, cmp func(a, b T) int) []T {
	from := 0
	for _, e := range ends {
		if !slices.IsSortedFunc(xs[from:e], cmp) {
			slices.SortStableFunc(xs, cmp)
			return xs
		}
		from = e
	}
	return mergeRuns(xs, ends, buf, func(out, a, b []T) {
		i, j, k := 0, 0, 0
		for i < len(a) && j < len(b) {
			if cmp(b[j], a[i]) < 0 {
				out[k] = b[j]
				j++
			} else {
				out[k] = a[i]
				i++
			}
			k++
		}
		k += copy(out[k:], a[i:])
		copy(out[k:], b[j:])
	})
}

// sortTimeRuns is sortRuns for times, where order among equal elements
// does not show. Its merge picks each element without a branch: a GPU's
// streams interleave in time, so which run gives the next element is a
// coin toss that a branch mispredicts half the time (the generic merge,
// with its comparison through a function value, was 7% of
// BenchmarkEngine).
func sortTimeRuns(xs []Time, ends []int, buf []Time) []Time {
	from := 0
	for _, e := range ends {
		if !slices.IsSorted(xs[from:e]) {
			slices.Sort(xs)
			return xs
		}
		from = e
	}
	return mergeRuns(xs, ends, buf, mergeTimes)
}

// mergeTimes merges sorted a and b into out (len(a)+len(b) long).
func mergeTimes(out, a, b []Time) {
	i, j, k := 0, 0, 0
	for i < len(a) && j < len(b) {
		x, y := a[i], b[j]
		v, d := x, 0
		if y < x {
			v, d = y, 1
		}
		out[k] = v
		j += d
		i += 1 - d
		k++
	}
	k += copy(out[k:], a[i:])
	copy(out[k:], b[j:])
}

// mergeRuns merges the sorted runs of xs ending at ends, pairwise, with
// merge2, which merges sorted a and b into out (len(a)+len(b) long).
func mergeRuns[T any](xs []T, ends []int, buf []T, merge2 func(out, a, b []T)) []T {
	if cap(buf) < len(xs) {
		buf = make([]T, len(xs))
	}
	buf = buf[:len(xs)]
	for len(ends) > 1 {
		from, nr := 0, 0
		for i := 0; i < len(ends); i += 2 {
			if i+1 == len(ends) {
				copy(buf[from:], xs[from:ends[i]])
				ends[nr] = ends[i]
				nr++
				break
			}
			merge2(buf[from:ends[i+1]], xs[from:ends[i]], xs[ends[i]:ends[i+1]])
			ends[nr] = ends[i+1]
			nr++
			from = ends[i+1]
		}
		xs, buf = buf, xs
		ends = ends[:nr]
	}
	return xs
}

// threadIndex lists each thread's records in call order (following
// ThreadPrev), and where each record sits in its list. A collective's
// parts after the first share its ThreadPrev and call, and the thread goes
// on from the first: each stands at the first part's place.
type threadIndex struct {
	lists [][]int32
	list  []int32 // each record's list
	pos   []int32 // each record's place in it
}

func newThreadIndex(res *Result) *threadIndex {
	n := len(res.Ops)
	x := &threadIndex{list: make([]int32, n), pos: make([]int32, n)}
	next := make([]int32, n) // the first record whose ThreadPrev is this one
	for i := range next {
		next[i] = -1
	}
	for i := range res.Ops {
		if p := res.Ops[i].ThreadPrev; p >= 0 && next[p] < 0 {
			next[p] = int32(i)
		}
	}
	for i := range res.Ops {
		if res.Ops[i].ThreadPrev >= 0 {
			continue
		}
		var l []int32
		for j := int32(i); j >= 0; j = next[j] {
			x.list[j], x.pos[j] = int32(len(x.lists)), int32(len(l))
			l = append(l, j)
		}
		x.lists = append(x.lists, l)
	}
	for i := range res.Ops {
		if p := res.Ops[i].ThreadPrev; p >= 0 && next[p] != int32(i) {
			f := next[p] // a later part of a collective: at its first part's place
			x.list[i], x.pos[i] = x.list[f], x.pos[f]
		}
	}
	return x
}

// awaitingInput returns how much of [t, e) the thread that issues op next
// spent blocked awaiting an input semaphore. At each moment the thread is
// where its latest op called by then put it: the ops that govern [t, e)
// are the one called last by t and those called in (t, e), each from its
// call to the next one's. A thread calls its ops in order, so both ends are
// found by binary search in the thread's list, however many ops it called
// between t and next.
func awaitingInput(res *Result, x *threadIndex, next int, t, e Time) Time {
	l := x.lists[x.list[next]][:x.pos[next]+1]
	call := func(j int) Time { return res.Ops[l[j]].Call }
	from := max(sort.Search(len(l), func(j int) bool { return call(j) > t })-1, 0)
	to := sort.Search(len(l), func(j int) bool { return call(j) >= e })
	var in Time
	end := e // where the span the op governs ends
	for j := to - 1; j >= from; j-- {
		rec := &res.Ops[l[j]]
		start := max(rec.Call, t)
		if rec.Kind == OpAwait && rec.Sem >= 0 && res.Program.Semaphores[rec.Sem].Input {
			in += max(min(rec.End, end)-start, 0)
		}
		end = start
	}
	return in
}

// blame follows what op i waits for at time t to the op that holds it up and
// classifies it: CauseEngine for a copy in progress or a copy queued for an
// engine (waiting on data), CauseEvent for work running on another GPU, and
// CauseHost for work the host has not issued yet. It also returns until,
// in (t, by], the first time at which something along that chain changes
// (an op is issued, starts or ends), or by: the cause holds on [t, until).
// Ops on a stream end in FIFO order, so the op holding up a stream at t is
// found by binary search. When that op is running, the ops of its kind that
// run back to back after it hold the stream up the same way: the cause
// holds until the last of them ends (looking no further than by), so that
// a stretch spent behind a long queue of kernels is one piece, not one per
// kernel. The cost is O(hops log n) plus the ops of that queue that start
// before by.
func blame(res *Result, sops [][]int, i int, t, by Time, gpu int) (cause CauseKind, until Time) {
	until = by
	for hops := 0; hops <= len(res.Ops); hops++ {
		rec := &res.Ops[i]
		switch {
		case rec.Issued > t:
			return CauseHost, min(until, rec.Issued)
		case rec.Start <= t && t < rec.End: // running
			return runningCause(rec, gpu), min(until, rec.End)
		case rec.Start <= t:
			return CauseHost, until // ended: nothing holds it up
		}
		until = min(until, rec.Start) // pending until then
		// Pending: the first op of its stream still unfinished at t holds it.
		ops := sops[rec.Stream]
		seq := int(rec.StreamSeq)
		k := sort.Search(seq, func(k int) bool { return res.Ops[ops[k]].End > t })
		if k < seq {
			if h := &res.Ops[ops[k]]; h.Start <= t {
				// Running, and then the ops of its kind starting as
				// the one before ends, passing over those that take no
				// time (records, satisfied waits), up to op i's
				// predecessor.
				end := h.End
				for j := k + 1; j < seq && end < until; j++ {
					x := &res.Ops[ops[j]]
					if x.Start != end || (x.End != end && x.Kind != h.Kind) {
						break
					}
					end = x.End
				}
				return runningCause(h, gpu), min(until, end)
			}
			until = min(until, res.Ops[ops[k]].End)
			i = ops[k]
			continue
		}
		switch {
		case (rec.Kind == OpEventWait || rec.Kind == OpCollective) && rec.Target >= 0 && res.Ops[rec.Target].End > t:
			until = min(until, res.Ops[rec.Target].End)
			i = int(rec.Target)
		case rec.Kind == OpCopy:
			return CauseEngine, until // queued for a copy engine
		default:
			return CauseHost, until
		}
	}
	return CauseHost, until
}

// runningCause classifies what an op running holds up on GPU gpu: a copy
// is data, work on another GPU (or a collective with other GPUs) is another
// GPU, anything else the host.
func runningCause(rec *OpRecord, gpu int) CauseKind {
	switch {
	case rec.Kind == OpCopy:
		return CauseEngine
	case int(rec.GPU) != gpu || rec.Kind == OpCollective:
		return CauseEvent
	}
	return CauseHost
}

// Where a critical-path step ends: an op's end, its host side's end, or its
// issue (the end of its API overhead).
type pathAt uint8

const (
	atEnd pathAt = iota
	atHostEnd
	atIssued
	atStaged // (a mode, not a time) the staging of a pageable copy before its start
)

func pathTime(r *OpRecord, at pathAt) Time {
	switch at {
	case atHostEnd:
		return r.HostEnd
	case atIssued:
		return r.Issued
	}
	return r.End
}

// criticalPath walks back from the op that ended last (last: the latest
// record of greatest max(End, HostEnd); -1 for none) through the causes
// that made each op start when it did. Each step is an op's execution, the
// API overhead of a call (from the thread reaching it to its issue), or the
// staging of a pageable copy (the part of the call after its issue).
func criticalPath(res *Result, last int) []PathStep {
	if last < 0 {
		return nil
	}
	var path []PathStep
	cur, at := last, atEnd
	if res.Ops[last].HostEnd > res.Ops[last].End {
		at = atHostEnd
	}
	for steps := 0; cur >= 0 && steps <= 3*len(res.Ops)+3; steps++ {
		rec := &res.Ops[cur]
		onStream := rec.Kind.OnStream()
		// A pageable copy stages its bytes in the call; one of no bytes
		// stages nothing.
		pageable := rec.Kind == OpCopy && rec.Memory == Pageable && rec.Bytes > 0
		part := PartOp
		mode := at
		if at == atHostEnd {
			switch {
			case pageable && rec.HostEnd > rec.Start:
				part = PartStaging
				mode = atEnd // its host side waited for the copy to start: follow its start
			case pageable:
				// Staged before the copy even started: the host's memcpys
				// alone took the time since the call was issued.
				part = PartStaging
				mode = atStaged
			case onStream:
				mode = atIssued
			default:
				mode = atEnd
			}
		}
		next, nextAt := -1, atEnd
		switch {
		case mode == atStaged:
			next, nextAt = cur, atIssued
		case mode == atIssued:
			part = PartAPI
			next, nextAt = int(rec.ThreadPrev), atHostEnd
		case rec.CauseKind == CauseNone:
		case rec.CauseKind == CauseHost && (onStream || rec.Kind == OpSync):
			next, nextAt = cur, atIssued
		case rec.CauseKind == CauseHost:
			next, nextAt = int(rec.ThreadPrev), atHostEnd
		case rec.CauseKind == CauseRank:
			// The last part to start was issued by its thread then.
			next, nextAt = int(rec.Cause), atIssued
		default:
			next = int(rec.Cause)
		}
		t := pathTime(rec, at)
		var nt Time
		if next >= 0 {
			nt = pathTime(&res.Ops[next], nextAt)
		}
		nt = min(max(nt, 0), t)
		path = append(path, PathStep{Record: cur, Part: part, Time: t - nt})
		cur, at = next, nextAt
	}
	slices.Reverse(path)
	return path
}

// PathShare is one category of the critical path and its share of the makespan.
type PathShare struct {
	What  string // "kernels", "communication", "copies (h2d)", "host launch overhead", ...
	Share float64
}

// PathShares groups the critical path by what each step was, largest first
// (ties by name).
func (r *Result) PathShares() []PathShare {
	if r.Makespan <= 0 {
		return nil
	}
	feeds := inputThreads(r.Program)
	by := map[string]Time{}
	for _, s := range r.CriticalPath {
		by[pathCategory(r, s, feeds)] += s.Time
	}
	var out []PathShare
	for k, t := range by {
		if t > 0 {
			out = append(out, PathShare{k, float64(t) / float64(r.Makespan)})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Share != out[j].Share {
			return out[i].Share > out[j].Share
		}
		return out[i].What < out[j].What
	})
	return out
}

// inputThreads marks the threads that signal an input semaphore: a data
// loader's workers.
func inputThreads(p *Program) []bool {
	out := make([]bool, len(p.Threads))
	for i, th := range p.Threads {
		for _, op := range th.Ops {
			if op.Kind == OpSignal && p.Semaphores[op.Sem].Input {
				out[i] = true
				break
			}
		}
	}
	return out
}

func pathCategory(r *Result, s PathStep, feeds []bool) string {
	rec := &r.Ops[s.Record]
	switch {
	case s.Part == PartAPI:
		return "host launch overhead"
	case s.Part == PartStaging:
		return "pageable staging"
	}
	switch rec.Kind {
	case OpKernel:
		if rec.MemoryBound {
			return "memory-bound kernels"
		}
		return "kernels"
	case OpCollective:
		return "communication"
	case OpCopy:
		if rec.Memory == Pageable {
			return "pageable copies (" + rec.Copy.String() + ")"
		}
		return "copies (" + rec.Copy.String() + ")"
	case OpHost:
		if feeds[rec.Thread] {
			return "input preparation"
		}
		return "host work"
	case OpAwait:
		if rec.Sem >= 0 && r.Program.Semaphores[rec.Sem].Input {
			return "input"
		}
		return "host synchronization"
	}
	return "synchronization"
}

// BusiestLink returns the link direction (or joint limit on both, where it
// bound: LinkStats.Bound) with the highest utilization over the
// run, or ok false when no link carried anything.
func (r *Result) BusiestLink() (l LinkStats, name string, ok bool) {
	best := -1.0
	for _, x := range r.Links {
		if x.Used <= 0 || !x.Bound(r.Machine) {
			continue
		}
		if u := x.Utilization(r.Makespan); u > best {
			best, l, ok = u, x, true
		}
	}
	if ok {
		name = l.LinkName(r.Machine)
	}
	return l, name, ok
}

// Bottleneck names in words what bounds the run: the largest share of the
// critical path, and the busiest link when it is nearly saturated; or, of a
// run a deadlock stopped, that it did.
func (r *Result) Bottleneck() string {
	stuck := 0
	for i := range r.Ops {
		if r.Ops[i].Unfinished {
			stuck++
		}
	}
	if stuck == 1 {
		return "deadlock: 1 op can never finish"
	} else if stuck > 1 {
		return fmt.Sprintf("deadlock: %d ops can never finish", stuck)
	}
	shares := r.PathShares()
	if len(shares) == 0 {
		return "nothing ran"
	}
	// Kernels are weighed together against the rest, then named by the
	// larger of their kinds: split, a minority of communication came out
	// on top of a majority of kernels.
	// So are a pageable copy's staging through host memory and its DMAs,
	// which the path lists apart.
	var compute, memory, staging, pageable float64
	var paged []string // the pageable shares' names
	for _, s := range shares {
		switch {
		case s.What == "kernels":
			compute = s.Share
		case s.What == "memory-bound kernels":
			memory = s.Share
		case s.What == "pageable staging":
			staging = s.Share
			paged = append(paged, s.What)
		case strings.HasPrefix(s.What, "pageable copies"):
			pageable += s.Share
			paged = append(paged, s.What)
		}
	}
	top := shares[0]
	if k := compute + memory; k > 0 && (top.What == "kernels" || top.What == "memory-bound kernels" || k > top.Share) {
		top = PathShare{"kernels", k}
		if memory > compute {
			top.What = "memory-bound kernels"
		}
	}
	if p := staging + pageable; len(paged) > 1 && (slices.Contains(paged, top.What) || p > top.Share) {
		top = PathShare{"pageable copies", p}
		if dirs := slices.DeleteFunc(paged, func(s string) bool { return s == "pageable staging" }); len(dirs) == 1 {
			top.What = dirs[0] // one direction: named
		}
	}
	words := map[string]string{
		"kernels":              "compute-bound",
		"memory-bound kernels": "memory-bound",
		"communication":        "communication-bound",
		"host launch overhead": "launch-bound",
		"host work":            "host-bound",
		"input":                "input-bound",
		"input preparation":    "input-bound",
		"pageable staging":     "staging-bound",
		"host synchronization": "synchronization-bound",
		"synchronization":      "synchronization-bound",
	}
	w, ok := words[top.What]
	switch {
	case ok:
	case strings.HasPrefix(top.What, "pageable copies"):
		w = "staging-bound" // the driver stages them through host memory
	default:
		w = "copy-bound"
	}
	msg := fmt.Sprintf("%s: %.0f%% of the critical path is %s", w, 100*top.Share, top.What)
	switch {
	case compute > 0 && memory > 0 && (top.What == "kernels" || top.What == "memory-bound kernels"):
		msg = fmt.Sprintf("%s: %.0f%% of the critical path is kernels, %.0f%% memory-bound ones", w, 100*top.Share, 100*memory)
	case strings.HasPrefix(top.What, "pageable copies") && staging > 0:
		msg = fmt.Sprintf("%s: %.0f%% of the critical path is %s, %.0f%% staging them through host memory", w, 100*top.Share, top.What, 100*staging)
	}
	lu := -1.0
	l, name, ok := r.BusiestLink()
	if ok {
		lu = l.Utilization(r.Makespan)
	}
	// A memory busier than every link is what bounds the copies (host
	// memory shared by several GPUs' copies): said first.
	if mem, mu := r.BusiestMemory(); mu >= 0.5 && mu > lu {
		msg += fmt.Sprintf("; %s's memory at %.0f%%", mem, 100*mu)
	}
	if lu >= 0.5 {
		msg += fmt.Sprintf("; busiest link %s at %.0f%%", name, 100*lu)
	}
	return msg
}

// BusiestMemory returns the host or GPU whose memory was the most used over
// the run (its bytes against its bandwidth), and that share; "" and 0 when
// no memory carried anything.
func (r *Result) BusiestMemory() (name string, utilization float64) {
	for i, s := range r.HostMemory {
		if u := s.Utilization(r.Makespan); s.Used > 0 && u > utilization {
			name, utilization = r.Machine.Hosts[i].Name, u
		}
	}
	for i, s := range r.GPUMemory {
		if u := s.Utilization(r.Makespan); s.Used > 0 && u > utilization {
			name, utilization = r.Machine.GPUs[i].Name, u
		}
	}
	return name, utilization
}

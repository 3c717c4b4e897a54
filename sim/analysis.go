package sim

import (
	"slices"
	"sort"
)

// gpuStats splits each GPU's time into compute, copy and idle by cause, with
// one sweep over the GPU's op boundaries: O(n log n) for n stream ops.
func gpuStats(res *Result, gs []*gpuState) []GPUStats {
	m := res.Machine
	out := make([]GPUStats, len(m.GPUs))
	byGPU := make([][]int, len(m.GPUs))
	prev := streamPredecessors(res)
	for i := range res.Ops {
		if rec := &res.Ops[i]; rec.Kind.OnStream() {
			byGPU[rec.GPU] = append(byGPU[rec.GPU], i)
		}
	}
	for g := range out {
		st := &out[g]
		st.Name = m.GPUs[g].Name
		st.EngineBusy = gs[g].ceBusy
		ops := byGPU[g]
		var ts []Time
		ts = append(ts, 0, res.Makespan)
		var maxIssued Time = -1
		for _, i := range ops {
			rec := &res.Ops[i]
			ts = append(ts, rec.Issued, rec.Start, rec.End)
			maxIssued = max(maxIssued, rec.Issued)
			switch rec.Kind {
			case OpKernel:
				st.Kernels++
			case OpCopy:
				st.Copies++
			}
		}
		slices.Sort(ts)
		ts = slices.Compact(ts)
		byIssue := slices.Clone(ops)
		sort.SliceStable(byIssue, func(a, b int) bool { return res.Ops[byIssue[a]].Issued < res.Ops[byIssue[b]].Issued })
		type edge struct {
			t     Time
			delta int
			kern  bool
		}
		var edges []edge // running kernels and copies: +1 at Start, -1 at End
		for _, i := range ops {
			rec := &res.Ops[i]
			if (rec.Kind == OpKernel || rec.Kind == OpCopy) && rec.End > rec.Start {
				k := rec.Kind == OpKernel
				edges = append(edges, edge{rec.Start, 1, k}, edge{rec.End, -1, k})
			}
		}
		sort.SliceStable(edges, func(a, b int) bool { return edges[a].t < edges[b].t })
		kernels, copies, ei, ii, front := 0, 0, 0, 0, 0
		for k := 0; k+1 < len(ts); k++ {
			t, d := ts[k], ts[k+1]-ts[k]
			for ei < len(edges) && edges[ei].t <= t {
				if edges[ei].kern {
					kernels += edges[ei].delta
				} else {
					copies += edges[ei].delta
				}
				ei++
			}
			for ii < len(byIssue) && res.Ops[byIssue[ii]].Issued <= t {
				ii++
			}
			// The earliest-issued op still waiting to start at t.
			for front < ii && res.Ops[byIssue[front]].Start <= t {
				front++
			}
			pending := -1
			for j := front; j < ii; j++ {
				if res.Ops[byIssue[j]].Start > t {
					pending = byIssue[j]
					break
				}
			}
			switch {
			case kernels > 0:
				st.Compute += d
			case copies > 0:
				st.Copy += d
			case pending >= 0:
				switch blame(res, prev, pending, t, g) {
				case CauseEvent:
					st.IdleGPU += d
				case CauseEngine:
					st.IdleData += d
				default:
					st.IdleHost += d
				}
			case maxIssued > t:
				st.IdleHost += d
			default:
				st.IdleDone += d
			}
		}
	}
	return out
}

// streamPredecessors returns, for each record, the previous op issued to the
// same stream, or -1.
func streamPredecessors(res *Result) []int {
	prev := make([]int, len(res.Ops))
	lastOn := make([]int, len(res.Program.Streams))
	for i := range lastOn {
		lastOn[i] = -1
	}
	order := make([]int, 0, len(res.Ops))
	for i := range res.Ops {
		prev[i] = -1
		if res.Ops[i].Kind.OnStream() {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return res.Ops[order[a]].Issued < res.Ops[order[b]].Issued })
	for _, i := range order {
		s := res.Ops[i].Stream
		prev[i] = lastOn[s]
		lastOn[s] = i
	}
	return prev
}

// blame follows what op i waits for at time t to the op that holds it up and
// classifies it: CauseEngine for a copy in progress or a copy queued for an
// engine (waiting on data), CauseEvent for work running on another GPU, and
// CauseHost for work the host has not issued yet.
func blame(res *Result, prev []int, i int, t Time, gpu int) CauseKind {
	for depth := 0; depth < 1000; depth++ {
		rec := &res.Ops[i]
		switch {
		case rec.Issued > t:
			return CauseHost
		case rec.Start <= t && t < rec.End: // running
			if rec.Kind == OpCopy {
				return CauseEngine
			}
			if rec.GPU != gpu {
				return CauseEvent
			}
			return CauseHost
		case prev[i] >= 0 && res.Ops[prev[i]].End > t:
			i = prev[i]
		case rec.Kind == OpEventWait && rec.Target >= 0 && res.Ops[rec.Target].End > t:
			i = rec.Target
		case rec.Kind == OpCopy:
			return CauseEngine // queued for a copy engine
		default:
			return CauseHost
		}
	}
	return CauseHost
}

// criticalPath walks back from the op that ended last through the causes
// that made each op start when it did. Each step is either an op's execution
// (from its cause to its end) or, for an async call, its host side (from the
// thread reaching it to the call returning).
func criticalPath(res *Result) []PathStep {
	last := -1
	for i := range res.Ops {
		rec := &res.Ops[i]
		if last < 0 || max(rec.End, rec.HostEnd) >= max(res.Ops[last].End, res.Ops[last].HostEnd) {
			last = i
		}
	}
	if last < 0 {
		return nil
	}
	var path []PathStep
	cur, host := last, false
	t := res.Ops[last].End
	if res.Ops[last].HostEnd > t {
		host, t = true, res.Ops[last].HostEnd
	}
	for steps := 0; cur >= 0 && steps <= 2*len(res.Ops)+2; steps++ {
		rec := &res.Ops[cur]
		async := rec.Kind.OnStream()
		if host && !async {
			host = false // blocking ops end on the host when they end
		}
		next, nextHost := -1, false
		switch {
		case host:
			next, nextHost = rec.ThreadPrev, true
		case rec.CauseKind == CauseNone:
		case rec.CauseKind == CauseHost && async:
			next, nextHost = cur, true
		case rec.CauseKind == CauseHost:
			next, nextHost = rec.Cause, true
		default:
			next = rec.Cause
		}
		var nt Time
		if next >= 0 {
			nt = res.Ops[next].End
			if nextHost {
				nt = res.Ops[next].HostEnd
				if nt == 0 && next == cur {
					nt = rec.Issued
				}
			}
			if next == cur {
				nt = rec.Issued
			}
		}
		nt = min(nt, t)
		path = append(path, PathStep{Record: cur, Host: host, Time: t - nt})
		cur, host, t = next, nextHost, nt
	}
	slices.Reverse(path)
	return path
}

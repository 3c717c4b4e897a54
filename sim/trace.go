package sim

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// WriteTrace writes res as a Chrome trace (JSON object format) that
// ui.perfetto.dev and chrome://tracing open: a process per host with a track
// per thread (the host side of every call), a process per GPU with a track per
// stream and per copy engine (execution), and a process for links with a
// utilization counter per link direction that carried traffic. Event waits
// are flow arrows from the record to the wait. Timestamps are microseconds
// with nanosecond digits (traceNS, appendUS: the resolution of Perfetto's
// timeline), so the same result gives the same bytes.
// apiCallName names the CUDA call that issues each kind of stream op.
var apiCallName = map[OpKind]string{OpKernel: "launch ", OpCopy: "memcpyAsync ", OpEventRecord: "eventRecord ", OpEventWait: "streamWaitEvent ", OpCollective: "collective "}

func WriteTrace(w io.Writer, res *Result) error { return WriteTraceWindow(w, res, 0, MaxTime) }

// WriteTraceWindow is WriteTrace of what overlaps [from, to] alone: the
// host side of calls and the execution of ops that reach into it, the
// arrows whose both ends are drawn, and the link counters from their value
// at from to to, and on while each link stays loaded (a slice that reaches
// out of the window is drawn whole). A large run's trace is then about as
// large as the part looked at.
func WriteTraceWindow(w io.Writer, res *Result, from, to Time) error {
	in := func(a, b Time) bool { return b >= from && a <= to }
	bw := bufio.NewWriterSize(w, 1<<16)
	t := &tw{jsonOut: jsonOut{w: bw}}
	m, p := res.Machine, res.Program
	// Names made of a kind and a label, once per kind rather than per op.
	kindPrefix := map[OpKind]string{}
	for _, k := range []OpKind{OpSync, OpAwait, OpSignal} {
		kindPrefix[k] = k.String() + " "
	}
	copyCat := map[CopyKind]string{}
	hostPid := func(h int) int { return 1 + h }
	gpuPid := func(g int) int { return 1 + len(m.Hosts) + g }
	linkPid := 1 + len(m.Hosts) + len(m.GPUs)
	streamTid := func(s int) int { return 1 + s }
	ceTid := func(e int) int { return 100000 + e }
	t.raw(`{"displayTimeUnit":"ns","traceEvents":[`)
	// Names and order of processes and tracks.
	// A host draws its threads only: one that runs none has no process
	// (an empty one in the trace).
	threaded := make([]bool, len(m.Hosts))
	for _, th := range p.Threads {
		threaded[th.Host] = true
	}
	for i, h := range m.Hosts {
		if !threaded[i] {
			continue
		}
		t.meta("process_name", hostPid(i), 0, "host "+h.Name)
		t.meta("process_sort_index", hostPid(i), 0, strconv.Itoa(i))
	}
	for i, g := range m.GPUs {
		t.meta("process_name", gpuPid(i), 0, g.Name+" ("+g.Model+")")
		t.meta("process_sort_index", gpuPid(i), 0, strconv.Itoa(len(m.Hosts)+i))
		for e := 0; e < g.CopyEngines; e++ {
			t.meta("thread_name", gpuPid(i), ceTid(e), g.Name+"/ce"+strconv.Itoa(e))
		}
	}
	t.meta("process_name", linkPid, 0, "links")
	t.meta("process_sort_index", linkPid, 0, strconv.Itoa(len(m.Hosts)+len(m.GPUs)))
	for i, th := range p.Threads {
		t.meta("thread_name", hostPid(th.Host), 1+i, th.Name)
	}
	for i, s := range p.Streams {
		t.meta("thread_name", gpuPid(s.GPU), streamTid(i), p.StreamName(m, i))
	}
	// Records made by one call (the ops of a graph launch, the ranks of a
	// collective issued whole) follow one another on their thread with the
	// same call and return (other threads' records may come between): the
	// call is drawn once, on the first of them, named for all (more[i] >
	// 0); the others draw none (more[i] < 0).
	more := make([]int32, len(res.Ops))
	// graph marks heads whose call holds ops other than one collective's
	// ranks (a graph launch); a collective's ranks need not follow one
	// another in res.Ops, as other threads' records come between.
	graph := make([]bool, len(res.Ops))
	head := make([]int32, len(p.Threads)) // each thread's last record that drew its call, +1
	for i := range res.Ops {
		r := &res.Ops[i]
		if apiCallName[r.Kind] == "" {
			continue
		}
		if k := head[r.Thread] - 1; k >= 0 {
			h := &res.Ops[k]
			sameCall := r.HostEnd > r.Call || r.Coll != nil && r.Coll == h.Coll // or a call of no time
			if r.Call == h.Call && r.HostEnd == h.HostEnd && sameCall {
				more[i] = -1
				more[k]++
				graph[k] = graph[k] || r.Coll == nil || r.Coll != h.Coll
				continue
			}
		}
		head[r.Thread] = int32(i) + 1
	}
	// Ops.
	for i := range res.Ops {
		r := &res.Ops[i]
		th := p.Threads[r.Thread]
		hp, htid := hostPid(th.Host), 1+int(r.Thread)
		label := r.ID
		switch r.Kind {
		case OpHost:
			if in(r.Start, r.End) {
				t.slice(hp, htid, r.Start, r.End, "", r.ID, "host", r)
			}
			continue
		case OpSync, OpAwait, OpSignal:
			if !in(r.Call, r.End) {
				continue
			}
			t.slice(hp, htid, r.Call, r.End, kindPrefix[r.Kind], label, r.Kind.String(), r)
			if r.Kind == OpSync && r.Event >= 0 && r.Target >= 0 && in(res.Ops[r.Target].Start, res.Ops[r.Target].End) {
				// An arrow from the record to the thread, where it is
				// blocked in the sync (or where it called, if the record
				// had ended by then).
				src := &res.Ops[r.Target]
				t.flow("s", i, gpuPid(int(src.GPU)), streamTid(int(src.Stream)), src.End)
				t.flow("f", i, hp, htid, max(src.End, r.Call))
			}
			continue
		}
		switch n := more[i]; {
		case !in(r.Call, r.HostEnd):
		case n == 0:
			t.slice(hp, htid, r.Call, r.HostEnd, apiCallName[r.Kind], label, "api", r)
		case n > 0 && r.Coll != nil && !graph[i]:
			t.slice(hp, htid, r.Call, r.HostEnd, apiCallName[r.Kind], fmt.Sprintf("%s and %d more rank%s", label, n, plural(n)), "api", r)
		case n > 0:
			t.slice(hp, htid, r.Call, r.HostEnd, "graph launch ", fmt.Sprintf("%s and %d more op%s", label, n, plural(n)), "api", r)
		}
		gp, stid := gpuPid(int(r.GPU)), streamTid(int(r.Stream))
		cat := r.Kind.String()
		if r.Kind == OpCopy {
			c, ok := copyCat[r.Copy]
			if !ok {
				c = "copy " + r.Copy.String()
				copyCat[r.Copy] = c
			}
			cat = c
		}
		if r.Coll != nil {
			cat = r.Coll.Name
		}
		if !in(r.Start, r.End) {
			continue
		}
		t.slice(gp, stid, r.Start, r.End, "", label, cat, r)
		if r.Kind == OpCopy && r.Engine >= 0 {
			t.slice(gp, ceTid(int(r.Engine)), r.Start, r.End, "", label, cat, r)
		}
		if (r.Kind == OpEventWait || r.Kind == OpCollective) && r.Target >= 0 && in(res.Ops[r.Target].Start, res.Ops[r.Target].End) {
			// From the record to the wait, or from the part of the
			// communicator before on another stream to this one.
			src := &res.Ops[r.Target]
			t.flow("s", i, gpuPid(int(src.GPU)), streamTid(int(src.Stream)), src.End)
			t.flow("f", i, gp, stid, r.Start)
		}
	}
	// Transfers on links: each copy is a slice on every link direction it
	// crosses, and each collective one on every direction its transfers
	// crossed (from the first start to the last end there), on the first
	// lane of that direction free at its start, so that slices on one
	// track never overlap.
	type onLinks struct {
		rec        int
		start, end Time
		dirs       []int
		label, cat string
	}
	var items []onLinks
	dirsOf := func(hops []Hop) []int {
		var dirs []int
		for _, h := range hops {
			dir := 2 * h.Link
			if h.Reverse {
				dir++
			}
			dirs = append(dirs, dir)
		}
		return dirs
	}
	// A two-stage copy whose legs were recorded is drawn leg by leg, each
	// on its own links while its bytes flowed (a staged copy's leg to the
	// host, then the one from it; a pageable copy's DMA), not the whole
	// copy on every hop of both.
	legged := map[int32]bool{}
	for _, lg := range res.CopyLegs {
		legged[lg.Rec] = true
		if !in(lg.Start, lg.End) || lg.End <= lg.Start {
			continue
		}
		r := &res.Ops[lg.Rec]
		hops := stagedLeg(m, r, lg.Stage)
		if r.Copy != CopyStaged {
			hops = copyHops(m, r) // a pageable copy's one DMA: its route
		}
		items = append(items, onLinks{rec: int(lg.Rec), start: lg.Start, end: lg.End, dirs: dirsOf(hops), label: r.ID, cat: "transfer"})
	}
	for i := range res.Ops {
		if r := &res.Ops[i]; r.Kind == OpCopy && r.End > r.Start && in(r.Start, r.End) && !legged[int32(i)] {
			items = append(items, onLinks{rec: i, start: r.Start, end: r.End, dirs: dirsOf(copyHops(m, r)), label: r.ID, cat: "transfer"})
		}
	}
	for _, sp := range res.CollLinks {
		if r := &res.Ops[sp.Rec]; in(sp.Start, sp.End) {
			label := r.ID
			if k := strings.LastIndexByte(label, '@'); k > 0 {
				label = label[:k] // the collective, not its first rank's part
			}
			items = append(items, onLinks{rec: int(sp.Rec), start: sp.Start, end: sp.End, dirs: []int{int(sp.Dir)}, label: label, cat: r.Coll.Name})
		}
	}
	slices.SortStableFunc(items, func(a, b onLinks) int { return cmp.Compare(a.start, b.start) })
	lanes := make([][]Time, 2*len(m.Links)) // per direction: end of the last slice of each lane
	laneTid := func(dir, k int) int { return 1 + dir*64 + k }
	for _, it := range items {
		for _, dir := range it.dirs {
			k := 0
			for k < len(lanes[dir]) && lanes[dir][k] > it.start {
				k++
			}
			if k == 64 {
				continue // more than 64 concurrent transfers: the counter tells the rest
			}
			if k == len(lanes[dir]) {
				lanes[dir] = append(lanes[dir], 0)
				t.meta("thread_name", linkPid, laneTid(dir, k), linkDirName(m, Hop{Link: dir / 2, Reverse: dir%2 == 1})+laneSuffix(k))
				t.meta("thread_sort_index", linkPid, laneTid(dir, k), strconv.Itoa(laneTid(dir, k)))
			}
			lanes[dir][k] = it.end
			t.slice(linkPid, laneTid(dir, k), it.start, it.end, "", it.label, it.cat, &res.Ops[it.rec])
		}
	}
	// Link utilization counters, from their value at from to to, and past
	// to until the link is idle: a counter holds its last value to the
	// trace's end, and the trace runs past to (its slices are drawn
	// whole). Cut at to, a link loaded there read loaded to the end; run to
	// the last slice's end, a window's trace held counters of most of the
	// run (12,208 points for a 100 us window of a 41 ms run) and could
	// still end on a rise. Past to, a link's changes are written while it
	// is loaded, through the change that idles it, and none after: what
	// it carried later, beyond the window, is not shown.
	for _, l := range res.Links {
		if l.Used == 0 {
			continue
		}
		name := l.LinkName(m)
		loaded := false // the value last written is not zero
		for k, pt := range l.Series {
			switch {
			case pt.T > to:
				if loaded {
					t.counter(linkPid, name, pt.T, pt.Load/1e9)
					loaded = pt.Load > 0
				}
				continue
			case pt.T >= from:
				t.counter(linkPid, name, pt.T, pt.Load/1e9)
			case k+1 == len(l.Series) || l.Series[k+1].T > from:
				t.counter(linkPid, name, from, pt.Load/1e9) // the load at from
			default:
				continue
			}
			loaded = pt.Load > 0
		}
	}
	t.raw("]}\n")
	if t.err != nil {
		return t.err
	}
	return bw.Flush()
}

// linkDirName names a link direction: "link:gpu0-sw0 gpu0->sw0".
func linkDirName(m *Machine, h Hop) string {
	lk := m.Links[h.Link]
	from, to := m.Nodes[lk.A].Name, m.Nodes[lk.B].Name
	if h.Reverse {
		from, to = to, from
	}
	return lk.Name + " " + from + "->" + to
}

func laneSuffix(k int) string {
	if k == 0 {
		return ""
	}
	return " #" + strconv.Itoa(k+1)
}

// stagedLeg returns the link directions leg stage (0: to the host, 1:
// from it) of a host-staged copy crosses; nil for any other copy.
func stagedLeg(m *Machine, r *OpRecord, stage int8) []Hop {
	if r.Copy != CopyStaged {
		return nil
	}
	p := m.StagedPath(m.Nodes[r.Src].Index, m.Nodes[r.Dst].Index)
	switch {
	case p.Kind != PathStaged:
		return nil
	case stage == 0:
		return p.ToHost.Hops
	}
	return p.FromHost.Hops
}

// copyHops returns the link directions a copy crosses (both legs of a
// host-staged copy).
func copyHops(m *Machine, r *OpRecord) []Hop {
	switch r.Copy {
	case CopyH2D, CopyD2H:
		rt, _ := m.Route(int(r.Src), int(r.Dst))
		return rt.Hops
	case CopyNVLink, CopyP2P, CopyStaged:
		p := m.PathBetween(m.Nodes[r.Src].Index, m.Nodes[r.Dst].Index)
		if r.Copy == CopyStaged {
			p = m.StagedPath(m.Nodes[r.Src].Index, m.Nodes[r.Dst].Index)
		}
		if p.Kind == PathStaged {
			return append(append([]Hop(nil), p.ToHost.Hops...), p.FromHost.Hops...)
		}
		return p.Route.Hops
	}
	return nil
}

// traceNS is t in whole nanoseconds, the resolution of Perfetto's
// timeline, rounded half up (times are never negative).
func traceNS(t Time) int64 {
	if t > MaxTime-500 {
		return int64(t / 1000)
	}
	return int64((t + 500) / 1000)
}

// appendUS appends ns nanoseconds as the trace's microseconds, so that a
// reader that parses the number as a double and multiplies it by 1000 gets
// ns back whether it truncates (Perfetto's JSON importer does) or rounds:
// the exact decimal where that holds ("261.5"), else that decimal and 0.1
// ns more ("261.9001": 261.9 parses to 261.89999999999998, which truncates
// to 261899 ns and would overlap a slice that ends at 261900). That holds
// below 10^15 ns (11.6 days; beyond, a double's step outgrows the 0.1 ns,
// and a truncating reader may be 1 ns off). Slices' ends are their start
// and duration in whole nanoseconds, so that slices back to back stay so.
func appendUS(b []byte, ns int64) []byte {
	b = strconv.AppendInt(b, ns/1000, 10)
	if f := ns % 1000; f != 0 {
		d := [4]byte{'.', byte('0' + f/100), byte('0' + f/10%10), byte('0' + f%10)}
		if int64(float64(ns)/1000*1000) != ns {
			return append(append(b, d[:]...), '1')
		}
		n := 4
		for d[n-1] == '0' {
			n--
		}
		b = append(b, d[:n]...)
	}
	return b
}

// tw writes the trace's events, each formatted in jsonOut's scratch
// buffer: a trace of 10^6 ops has millions of events.
type tw struct {
	jsonOut
	n int // events written
}

func (t *tw) sep() {
	if t.n > 0 {
		t.raw(",\n")
	} else {
		t.raw("\n")
	}
	t.n++
}

func (t *tw) meta(name string, pid, tid int, value string) {
	t.sep()
	t.raw(`{"ph":"M","name":"` + name + `","pid":` + strconv.Itoa(pid) + `,"tid":` + strconv.Itoa(tid) + `,"args":{`)
	if name == "process_sort_index" || name == "thread_sort_index" {
		t.raw(`"sort_index":` + value + `}}`)
		return
	}
	t.raw(`"name":`)
	t.str(value)
	t.raw(`}}`)
}

// slice writes a complete event named prefix+name.
func (t *tw) slice(pid, tid int, start, end Time, prefix, name, cat string, r *OpRecord) {
	t.sep()
	b := append(t.buf[:0], `{"ph":"X","pid":`...)
	b = strconv.AppendInt(b, int64(pid), 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, int64(tid), 10)
	b = append(b, `,"ts":`...)
	b = appendUS(b, traceNS(start))
	b = append(b, `,"dur":`...)
	b = appendUS(b, traceNS(end)-traceNS(start))
	b = append(b, `,"name":`...)
	b = appendJSONString2(b, prefix, name)
	b = append(b, `,"cat":`...)
	b = appendJSONString(b, cat)
	b = append(b, `,"args":{"id":`...)
	b = appendJSONString(b, r.ID)
	if r.Kind == OpCopy {
		b = append(b, `,"bytes":`...)
		b = strconv.AppendInt(b, r.Bytes, 10)
	}
	b = append(b, `,"cause":`...)
	b = appendJSONString(b, r.CauseKind.String())
	if r.Unfinished {
		b = append(b, `,"unfinished":true`...)
	}
	if r.MemoryBound {
		b = append(b, `,"memory_bound":true`...)
	}
	b = append(b, `}}`...)
	t.buf = b
	t.bytes(b)
}

func (t *tw) flow(ph string, id, pid, tid int, at Time) {
	t.sep()
	b := append(t.buf[:0], `{"ph":"`...)
	b = append(b, ph...)
	b = append(b, `","id":`...)
	b = strconv.AppendInt(b, int64(id), 10)
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(pid), 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, int64(tid), 10)
	b = append(b, `,"ts":`...)
	b = appendUS(b, traceNS(at))
	b = append(b, `,"name":"event","cat":"wait"`...)
	if ph == "f" {
		b = append(b, `,"bp":"e"`...)
	}
	b = append(b, '}')
	t.buf = b
	t.bytes(b)
}

// counter writes a counter event: the load of a link direction from ts on.
func (t *tw) counter(pid int, name string, ts Time, gbps float64) {
	t.sep()
	b := append(t.buf[:0], `{"ph":"C","pid":`...)
	b = strconv.AppendInt(b, int64(pid), 10)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, name)
	b = append(b, `,"ts":`...)
	b = appendUS(b, traceNS(ts))
	b = append(b, `,"args":{"GB/s":`...)
	b = strconv.AppendFloat(b, gbps, 'g', 8, 64)
	b = append(b, `}}`...)
	t.buf = b
	t.bytes(b)
}

func plural(n int32) string {
	if n == 1 {
		return ""
	}
	return "s"
}

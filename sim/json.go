package sim

import (
	"bufio"
	"encoding/json"
	"io"
	"math"
	"strconv"
)

// WriteJSON writes res as one JSON document: the makespan, per-GPU, per-thread
// and per-link statistics, the critical path, warnings, and one entry per
// executed op. Times are nanoseconds with up to three decimals (exact
// picoseconds); the same result always gives the same bytes.
func WriteJSON(w io.Writer, res *Result) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	j := &jw{w: bw}
	m, p := res.Machine, res.Program
	j.raw("{")
	j.key("scenario", true)
	j.str(p.Name)
	j.key("topology", false)
	j.str(m.Name)
	j.key("makespan_ns", false)
	j.raw(res.Makespan.NS())
	j.key("events", false)
	j.raw(strconv.FormatUint(res.Events, 10))
	j.key("warnings", false)
	j.raw("[")
	for i, s := range res.Warnings {
		if i > 0 {
			j.raw(",")
		}
		j.str(s)
	}
	j.raw("]")
	j.key("gpus", false)
	j.raw("[")
	for i, g := range res.GPUs {
		if i > 0 {
			j.raw(",")
		}
		j.raw("\n  {")
		j.key("name", true)
		j.str(g.Name)
		j.tkey("compute_ns", g.Compute)
		j.tkey("comm_ns", g.Comm)
		j.tkey("copy_ns", g.Copy)
		j.tkey("idle_ns", g.Idle())
		j.tkey("idle_host_ns", g.IdleHost)
		j.tkey("idle_input_ns", g.IdleInput)
		j.tkey("idle_data_ns", g.IdleData)
		j.tkey("idle_gpu_ns", g.IdleGPU)
		j.tkey("idle_done_ns", g.IdleDone)
		j.key("kernels", false)
		j.raw(strconv.Itoa(g.Kernels))
		j.key("copies", false)
		j.raw(strconv.Itoa(g.Copies))
		j.key("collectives", false)
		j.raw(strconv.Itoa(g.Collectives))
		j.key("copy_engine_busy_ns", false)
		j.raw("[")
		for k, b := range g.EngineBusy {
			if k > 0 {
				j.raw(",")
			}
			j.raw(b.NS())
		}
		j.raw("]}")
	}
	j.raw("]")
	j.key("threads", false)
	j.raw("[")
	for i, t := range res.Threads {
		if i > 0 {
			j.raw(",")
		}
		j.raw("\n  {")
		j.key("name", true)
		j.str(t.Name)
		j.key("host", false)
		j.str(m.Hosts[p.Threads[i].Host].Name)
		j.tkey("cpu_ns", t.CPU)
		j.tkey("blocked_ns", t.Blocked)
		j.tkey("end_ns", t.End)
		j.raw("}")
	}
	j.raw("]")
	j.key("links", false)
	j.raw("[")
	for i, l := range res.Links {
		if i > 0 {
			j.raw(",")
		}
		lk := m.Links[l.Link]
		from, to := m.Nodes[lk.A].Name, m.Nodes[lk.B].Name
		if l.Reverse {
			from, to = to, from
		}
		j.raw("\n  {")
		j.key("name", true)
		j.str(lk.Name)
		j.key("from", false)
		j.str(from)
		j.key("to", false)
		j.str(to)
		j.resource(l.ResourceStats, res.Makespan)
		j.raw("}")
	}
	j.raw("]")
	j.key("host_memory", false)
	j.raw("[")
	for i, h := range res.HostMemory {
		if i > 0 {
			j.raw(",")
		}
		j.raw("\n  {")
		j.key("name", true)
		j.str(m.Hosts[i].Name)
		j.resource(h, res.Makespan)
		j.raw("}")
	}
	j.raw("]")
	j.key("critical_path", false)
	j.raw("[")
	for i, s := range res.CriticalPath {
		if i > 0 {
			j.raw(",")
		}
		j.raw("\n  {")
		j.key("id", true)
		j.str(res.Ops[s.Record].ID)
		j.key("part", false)
		j.str(s.Part.String())
		j.tkey("ns", s.Time)
		j.raw("}")
	}
	j.raw("]")
	j.key("ops", false)
	j.raw("[")
	for i := range res.Ops {
		if i > 0 {
			j.raw(",")
		}
		r := &res.Ops[i]
		j.raw("\n  {")
		j.key("id", true)
		j.str(r.ID)
		j.key("kind", false)
		j.str(r.Kind.String())
		j.key("thread", false)
		j.str(p.Threads[r.Thread].Name)
		if r.Stream >= 0 {
			j.key("stream", false)
			j.str(p.StreamName(m, int(r.Stream)))
		}
		if r.GPU >= 0 {
			j.key("gpu", false)
			j.str(m.GPUs[r.GPU].Name)
		}
		if r.Event >= 0 {
			j.key("event", false)
			j.str(p.Events[r.Event])
		}
		j.tkey("call_ns", r.Call)
		j.tkey("host_end_ns", r.HostEnd)
		j.tkey("issued_ns", r.Issued)
		j.tkey("start_ns", r.Start)
		j.tkey("end_ns", r.End)
		if r.Unfinished {
			j.key("unfinished", false)
			j.raw("true")
		}
		if r.Kind == OpCopy {
			j.key("bytes", false)
			j.raw(strconv.FormatInt(r.Bytes, 10))
			j.key("from", false)
			j.str(m.Nodes[r.Src].Name)
			j.key("to", false)
			j.str(m.Nodes[r.Dst].Name)
			j.key("copy", false)
			j.str(r.Copy.String())
			if r.Copy == CopyH2D || r.Copy == CopyD2H {
				j.key("memory", false)
				j.str(r.Memory.String())
			}
			j.key("engine", false)
			j.raw(strconv.Itoa(int(r.Engine)))
		}
		if c := r.Coll; c != nil {
			j.key("collective", false)
			j.str(c.Name)
			j.key("algorithm", false)
			j.str(c.Algorithm)
			j.key("protocol", false)
			j.str(c.Protocol)
			j.key("bytes", false)
			j.raw(strconv.FormatInt(c.Bytes, 10))
			j.tkey("begin_ns", r.Begin)
		}
		if r.Target >= 0 {
			j.key("waits_for", false)
			j.str(res.Ops[r.Target].ID)
		}
		j.key("cause", false)
		j.str(r.CauseKind.String())
		if r.Cause >= 0 && int(r.Cause) != i {
			j.key("cause_id", false)
			j.str(res.Ops[r.Cause].ID)
		}
		j.raw("}")
	}
	j.raw("]}\n")
	if j.err != nil {
		return j.err
	}
	return bw.Flush()
}

type jw struct {
	w   *bufio.Writer
	err error
}

func (j *jw) raw(s string) {
	if j.err == nil {
		_, j.err = j.w.WriteString(s)
	}
}

func (j *jw) str(s string) {
	b, _ := json.Marshal(s)
	if j.err == nil {
		_, j.err = j.w.Write(b)
	}
}

func (j *jw) key(k string, first bool) {
	if !first {
		j.raw(",")
	}
	j.raw(`"` + k + `":`)
}

func (j *jw) tkey(k string, t Time) {
	j.key(k, false)
	j.raw(t.NS())
}

func (j *jw) num(v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		j.raw("null")
		return
	}
	j.raw(strconv.FormatFloat(v, 'g', 10, 64))
}

func (j *jw) resource(r ResourceStats, span Time) {
	j.key("capacity_bytes_per_s", false)
	j.num(r.Capacity)
	j.key("bytes", false)
	j.raw(strconv.FormatFloat(math.Round(r.Used), 'f', 0, 64))
	j.tkey("busy_ns", r.Busy)
	j.key("utilization", false)
	j.num(r.Utilization(span))
	j.key("peak_bytes_per_s", false)
	j.num(r.Peak)
}

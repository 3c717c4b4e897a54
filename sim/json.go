package sim

import (
	"bufio"
	"bytes"
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
	j := &jw{jsonOut{w: bw}}
	m, p := res.Machine, res.Program
	j.raw("{")
	j.key("scenario", true)
	j.str(p.Name)
	j.key("topology", false)
	j.str(m.Name)
	j.key("vars", false)
	j.raw("{")
	for i, v := range p.Vars {
		j.key(v.Name, i == 0)
		j.str(v.Value)
	}
	j.raw("}")
	j.key("makespan_ns", false)
	j.raw(res.Makespan.NS())
	j.key("events", false)
	j.raw(strconv.FormatUint(res.Events, 10))
	j.key("bottleneck", false)
	j.str(res.Bottleneck())
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
	// Link directions under "links"; joint limits on both directions
	// (duplex_bandwidth), which count the bytes of both, under
	// "links_both_ways" (empty where no link has one), so that summing
	// "links" counts each byte once.
	for _, both := range []bool{false, true} {
		n := 0
		for _, l := range res.Links {
			if l.Both != both {
				continue
			}
			if n == 0 {
				if both {
					j.key("links_both_ways", false)
				} else {
					j.key("links", false)
				}
				j.raw("[")
			} else {
				j.raw(",")
			}
			n++
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
			j.resource(l.ResourceStats, res.Makespan, l.Bytes)
			j.raw("}")
		}
		switch {
		case n > 0:
			j.raw("]")
		case !both:
			j.key("links", false)
			j.raw("[]")
		default:
			// No joint limit: an empty list, as "links" has, not a key
			// that is there in one run and not in another.
			j.key("links_both_ways", false)
			j.raw("[]")
		}
	}
	memories := func(key string, rs []ResourceStats, name func(int) string) {
		j.key(key, false)
		j.raw("[")
		for i, r := range rs {
			if i > 0 {
				j.raw(",")
			}
			j.raw("\n  {")
			j.key("name", true)
			j.str(name(i))
			j.resource(r, res.Makespan, r.Used)
			j.raw("}")
		}
		j.raw("]")
	}
	memories("host_memory", res.HostMemory, func(i int) string { return m.Hosts[i].Name })
	memories("gpu_memory", res.GPUMemory, func(i int) string { return m.GPUs[i].Name })
	if wk := p.Work; wk != nil {
		j.key("work", false)
		j.raw("{")
		j.key("steps", true)
		j.int(int64(wk.Steps))
		j.key("samples", false)
		j.num(wk.Samples)
		j.key("tokens", false)
		j.num(wk.Tokens)
		j.key("model_flops", false)
		j.num(wk.ModelFLOPs)
		j.key("peak_flops", false)
		j.num(wk.PeakFLOPs)
		j.key("dtype", false)
		j.str(wk.DType)
		secs := res.Makespan.Seconds()
		j.key("samples_per_s", false)
		j.num(wk.Samples / secs)
		j.key("tokens_per_s", false)
		j.num(wk.Tokens / secs)
		j.key("mfu", false)
		if mfu, ok := wk.MFU(res.Makespan); ok {
			j.num(mfu)
		} else {
			j.raw("null")
		}
		if wk.Kind != "" {
			j.key("kind", false)
			j.str(wk.Kind)
		}
		if first, per, ok := res.TokenTimes(); ok {
			j.tkey("first_token_ns", first)
			if wk.Steps > 1 { // one token has no time between tokens
				j.tkey("per_token_ns", per)
			}
		}
		j.raw("}")
	}
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
	streams := make([]string, len(p.Streams))
	for i := range streams {
		streams[i] = p.StreamName(m, i)
	}
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
			j.str(streams[r.Stream])
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
		if r.MemoryBound {
			j.key("memory_bound", false)
			j.raw("true")
		}
		if r.Kind == OpCopy {
			j.key("bytes", false)
			j.int(r.Bytes)
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
			j.int(int64(r.Engine))
		}
		if c := r.Coll; c != nil {
			j.key("collective", false)
			j.str(c.Name)
			j.key("algorithm", false)
			j.str(c.Algorithm)
			j.key("protocol", false)
			j.str(c.Protocol)
			j.key("bytes", false)
			j.int(c.Bytes)
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

// jsonOut is where the JSON and trace writers write: a buffered writer,
// its first error, and a scratch buffer that what they format goes
// through. A string that needs no escaping is written as it is: a result
// of 10^6 ops writes tens of millions of keys, times and strings, and
// allocating each (as json.Marshal and string concatenation do) took most
// of the writers' time.
type jsonOut struct {
	w   *bufio.Writer
	err error
	buf []byte
}

func (o *jsonOut) raw(s string) {
	if o.err == nil {
		_, o.err = o.w.WriteString(s)
	}
}

func (o *jsonOut) bytes(b []byte) {
	if o.err == nil {
		_, o.err = o.w.Write(b)
	}
}

func (o *jsonOut) str(s string) {
	o.buf = appendJSONString(o.buf[:0], s)
	o.bytes(o.buf)
}

// jw writes the result JSON.
type jw struct{ jsonOut }

func (j *jw) key(k string, first bool) {
	b := j.buf[:0]
	if !first {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, k...)
	b = append(b, '"', ':')
	j.buf = b
	j.bytes(b)
}

func (j *jw) tkey(k string, t Time) {
	j.key(k, false)
	j.buf = t.appendNS(j.buf[:0])
	j.bytes(j.buf)
}

// int writes an integer.
func (j *jw) int(v int64) {
	j.buf = strconv.AppendInt(j.buf[:0], v, 10)
	j.bytes(j.buf)
}

// appendJSONString appends s as a JSON string, as encoding/json writes it
// without HTML escapes (so that "gpu0->nvswitch" stays greppable): as it
// is, quoted, where no byte needs escaping, which is every name gpusim
// makes.
func appendJSONString(b []byte, s string) []byte {
	if !plainJSON(s) {
		return append(b, marshalString(s)...)
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendJSONString2 appends a+s as one JSON string, without building it.
func appendJSONString2(b []byte, a, s string) []byte {
	if !plainJSON(a) || !plainJSON(s) {
		return append(b, marshalString(a+s)...)
	}
	b = append(b, '"')
	b = append(b, a...)
	b = append(b, s...)
	return append(b, '"')
}

// marshalString is s as encoding/json writes it with SetEscapeHTML(false).
func marshalString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// plainJSON reports whether s is printable ASCII that encoding/json writes
// as it is between quotes (HTML escapes off).
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

func (j *jw) num(v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		j.raw("null")
		return
	}
	j.raw(strconv.FormatFloat(v, 'g', 10, 64))
}

// resource writes r's fields; bytes is what crossed it (r.Used but for
// links, LinkStats.Bytes), while its utilization is r's load.
func (j *jw) resource(r ResourceStats, span Time, bytes float64) {
	j.key("capacity_bytes_per_s", false)
	j.num(r.Capacity)
	j.key("bytes", false)
	j.raw(strconv.FormatFloat(math.Round(bytes), 'f', 0, 64))
	j.tkey("busy_ns", r.Busy)
	j.key("utilization", false)
	j.num(r.Utilization(span))
	j.key("peak_bytes_per_s", false)
	j.num(r.Peak)
}

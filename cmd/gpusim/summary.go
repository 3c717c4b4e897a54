package main

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"gpusim/internal/units"
	"gpusim/scenarios"
	"gpusim/sim"
)

func pct(part, whole sim.Time) string {
	if whole <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(part)/float64(whole))
}

// writeSummary prints what a person wants to read first: the makespan, where
// each GPU's time went, the busiest links, the host threads, and the ops on
// the critical path.
func writeSummary(w io.Writer, sc *scenarios.Scenario, res *sim.Result) {
	m, p := res.Machine, res.Program
	span := res.Makespan
	fmt.Fprintf(w, "%s on %s: makespan %s (%s, %s)\n", sc.Name, m.Name, span, plural(len(res.Ops), "1 op", "%d ops"), plural(int(res.Events), "1 event", "%d events"))
	if len(p.Vars) > 0 || len(sc.Replaced) > 0 {
		var vs []string
		for _, v := range p.Vars {
			vs = append(vs, v.Name+"="+v.Value)
		}
		if len(sc.Replaced) > 0 {
			vs = append(vs, fmt.Sprintf("(%s: unused, the topology given replaces the scenario's)", strings.Join(sc.Replaced, ", ")))
		}
		fmt.Fprintf(w, "vars: %s\n", strings.Join(vs, " "))
	}
	fmt.Fprintf(w, "bottleneck: %s\n", res.Bottleneck())
	if line := inferenceLine(res); line != "" {
		fmt.Fprintln(w, line)
	} else if line := workLine(p.Work, span); line != "" {
		fmt.Fprintln(w, line)
	}

	fmt.Fprintln(w, "\nGPUs (share of the makespan):")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	// The idle time split by what it waited on: a heading over those
	// columns (text after a line's last tab sets no column's width).
	fmt.Fprintln(tw, "  \t\t\t\t\tidle, waiting on:")
	fmt.Fprintln(tw, "  gpu\tcompute\tcomm\tcopy only\tidle\thost\tinput\tdata\tother GPU\tdone\tkernels\tcopies\tcollectives")
	// A run of three or more GPUs whose rows read alike is one row
	// ("gpu0-gpu71": a rack's data-parallel ranks), each GPU's figures
	// as printed; --json has every GPU's.
	var names []string
	cells := ""
	flush := func() {
		if len(names) == 0 {
			return
		}
		if len(names) >= 3 {
			names = []string{nameRuns(names)}
		}
		for _, n := range names {
			fmt.Fprintf(tw, "  %s\t%s\n", n, cells)
		}
		names = names[:0]
	}
	for _, g := range res.GPUs {
		if g.Kernels+g.Copies+g.Collectives == 0 && peerCopies(res, g.Name) == 0 {
			continue // one line below names them all
		}
		c := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d", pct(g.Compute, span), pct(g.Comm, span), pct(g.Copy, span), pct(g.Idle(), span),
			pct(g.IdleHost, span), pct(g.IdleInput, span), pct(g.IdleData, span), pct(g.IdleGPU, span), pct(g.IdleDone, span), g.Kernels, g.Copies, g.Collectives)
		if c != cells || len(names) > 0 && !consecutive(names[len(names)-1], g.Name) {
			flush()
			cells = c
		}
		names = append(names, g.Name)
	}
	flush()
	tw.Flush()
	var unused []string // GPUs that run nothing: one line for all
	// GPUs that idle alike share a line: "gpu0-gpu71 idle ...".
	var idleText []string
	idlers := map[string][]string{}
	for _, g := range res.GPUs {
		if g.Kernels+g.Copies+g.Collectives == 0 {
			if peerCopies(res, g.Name) > 0 {
				fmt.Fprintf(w, "  %s runs no ops of its own; it takes part in %s issued on other GPUs' streams.\n", g.Name, plural(peerCopies(res, g.Name), "1 copy", "%d copies"))
			} else {
				unused = append(unused, g.Name)
			}
		} else if c := dominantIdle(g); c != "" && g.Idle() > span/10 {
			text := fmt.Sprintf("%s of the time, mostly %s.", pct(g.Idle(), span), c)
			if idlers[text] == nil {
				idleText = append(idleText, text)
			}
			idlers[text] = append(idlers[text], g.Name)
		}
	}
	for _, text := range idleText {
		if gs := idlers[text]; len(gs) == 1 {
			fmt.Fprintf(w, "  %s idles %s\n", gs[0], text)
		} else {
			fmt.Fprintf(w, "  %s each idle %s\n", nameRuns(gs), text)
		}
	}
	switch len(unused) {
	case 0:
	case 1:
		fmt.Fprintf(w, "  %s runs nothing in this scenario.\n", unused[0])
	default:
		fmt.Fprintf(w, "  %d GPUs run nothing in this scenario: %s.\n", len(unused), nameRuns(unused))
	}

	type linkRow struct {
		name string
		st   sim.LinkStats
	}
	var rows []linkRow
	for _, l := range res.Links {
		if l.Used <= 0 || !l.Bound(m) {
			continue
		}
		rows = append(rows, linkRow{l.LinkName(m), l})
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].st.Utilization(span) > rows[j].st.Utilization(span) })
	if len(rows) > 0 {
		header := "Links (per direction, busiest first):"
		for _, r := range rows {
			if r.st.Both {
				header = "Links (per direction, and both ways where a link's joint limit on both bound; busiest first):"
			}
		}
		uses := make([]useRow, len(rows))
		for i, r := range rows {
			uses[i] = useRow{r.name, r.st.Bytes, r.st.ResourceStats}
		}
		writeUses(w, header, "link", uses, span)
	}
	writeMemories(w, res)

	fmt.Fprintln(w, "\nHost threads:")
	tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  thread\thost\tCPU (API calls, host work, staging memcpys)\tblocked (syncs, awaits, staging buffers)\tended")
	for i, t := range res.Threads {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", t.Name, m.Hosts[p.Threads[i].Host].Name, pct(t.CPU, span), pct(t.Blocked, span), t.End)
	}
	tw.Flush()

	if len(res.CriticalPath) > 0 && span == 0 {
		fmt.Fprintf(w, "\nCritical path: %s, all of no time\n", plural(len(res.CriticalPath), "1 step", "%d steps"))
	} else if len(res.CriticalPath) > 0 {
		// Totals by op on the path, largest first.
		type agg struct {
			rec  int
			part sim.PathPart
			t    sim.Time
		}
		var as []agg
		byKind := map[string]sim.Time{}
		for _, s := range res.CriticalPath {
			as = append(as, agg{s.Record, s.Part, s.Time})
			byKind[pathKind(res, s)] += s.Time
		}
		sort.SliceStable(as, func(i, j int) bool { return as[i].t > as[j].t })
		fmt.Fprintf(w, "\nCritical path: %s;", plural(len(res.CriticalPath), "1 step", "%d steps"))
		var kinds []string
		for k := range byKind {
			kinds = append(kinds, k)
		}
		sort.Slice(kinds, func(i, j int) bool {
			if byKind[kinds[i]] != byKind[kinds[j]] {
				return byKind[kinds[i]] > byKind[kinds[j]]
			}
			return kinds[i] < kinds[j]
		})
		n := 0
		for _, k := range kinds {
			if float64(byKind[k]) < 0.0005*float64(span) {
				continue
			}
			if n > 0 {
				fmt.Fprint(w, ",")
			}
			n++
			fmt.Fprintf(w, " %s %s", k, pct(byKind[k], span))
		}
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		shown := 0
		for i, a := range as {
			if i == 5 || a.t == 0 {
				break
			}
			shown++
			r := &res.Ops[a.rec]
			where := ""
			if r.Stream >= 0 {
				where = p.StreamName(m, int(r.Stream))
			} else {
				where = p.Threads[r.Thread].Name
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", r.ID, pathKind(res, sim.PathStep{Record: a.rec, Part: a.part}), where, a.t, pct(a.t, span))
		}
		tw.Flush()
		if rest := len(as) - shown; rest > 0 {
			// Steps of no time (records, waits that did not wait) are
			// on the path too: counted, never listed.
			fmt.Fprintf(w, "  ... %s, none longer than these\n", plural(rest, "1 more step", "%d more steps"))
		}
	}
	if len(res.Warnings) > 0 {
		fmt.Fprintf(w, "\n%s, printed on stderr.\n", plural(len(res.Warnings), "1 warning", "%d warnings"))
	}
}

// writeMemories lists the host and GPU memories that copies and
// collectives used (a GPU's: device-local copies and reductions; kernels'
// traffic is in their durations), busiest first: host memory that several
// GPUs' copies share can bound them below every link's bandwidth.
func writeMemories(w io.Writer, res *sim.Result) {
	m, span := res.Machine, res.Makespan
	var rows []useRow
	for i, st := range res.HostMemory {
		if st.Used > 0 {
			rows = append(rows, useRow{m.Hosts[i].Name, st.Used, st})
		}
	}
	for i, st := range res.GPUMemory {
		if st.Used > 0 {
			rows = append(rows, useRow{m.GPUs[i].Name, st.Used, st})
		}
	}
	if len(rows) == 0 {
		return
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].st.Utilization(span) > rows[j].st.Utilization(span) })
	writeUses(w, "Memory (what copies and collectives read and wrote, busiest first):", "memory of", rows, span)
}

// useRow is a row of writeUses: a link direction or a memory, the bytes
// that crossed it, and its statistics.
type useRow struct {
	name  string
	bytes float64
	st    sim.ResourceStats
}

// writeUses prints a table of rows under header, the first 8 and a count
// of the others: name, bytes, bandwidth, utilization and busy share.
func writeUses(w io.Writer, header, first string, rows []useRow, span sim.Time) {
	fmt.Fprintln(w, "\n"+header)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  %s\tbytes\tbandwidth\tutilization\tbusy\n", first)
	for i, r := range rows {
		if i == 8 {
			fmt.Fprintf(tw, "  ... %d more\t\t\t\t\n", len(rows)-i)
			break
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%.1f%%\t%s\n", r.name, units.Format(r.bytes, units.Bytes), units.Format(r.st.Capacity, units.Bandwidth),
			100*r.st.Utilization(span), pct(r.st.Busy, span))
	}
	tw.Flush()
}

func pathKind(res *sim.Result, s sim.PathStep) string {
	r := &res.Ops[s.Record]
	switch s.Part {
	case sim.PartAPI:
		return "api overhead"
	case sim.PartStaging:
		return "staging " + r.Copy.String()
	}
	switch r.Kind {
	case sim.OpCopy:
		if r.Memory == sim.Pageable {
			return "copy " + r.Copy.String() + " (pageable)"
		}
		return "copy " + r.Copy.String()
	case sim.OpSync, sim.OpAwait:
		return r.Kind.String() + " return"
	case sim.OpCollective:
		return r.Coll.Name
	}
	return r.Kind.String()
}

func dominantIdle(g sim.GPUStats) string {
	best, name := sim.Time(0), ""
	for _, c := range []struct {
		t    sim.Time
		name string
	}{
		{g.IdleHost, "waiting on the host (launches, host work, syncs)"},
		{g.IdleInput, "waiting on input (the data loader)"},
		{g.IdleData, "waiting on data (copies)"},
		{g.IdleGPU, "waiting on another GPU"},
		{g.IdleDone, "after finishing its work"},
	} {
		if c.t > best {
			best, name = c.t, c.name
		}
	}
	return name
}

// peerCopies counts the copies that read or write the named GPU from a
// stream of another GPU.
func peerCopies(res *sim.Result, gpu string) int {
	m := res.Machine
	n := 0
	for i := range res.Ops {
		r := &res.Ops[i]
		if r.Kind != sim.OpCopy || r.Bytes == 0 || m.GPUs[r.GPU].Name == gpu {
			continue // a copy of no bytes moves nothing through gpu
		}
		if m.Nodes[r.Src].Name == gpu || m.Nodes[r.Dst].Name == gpu {
			n++
		}
	}
	return n
}

// workLine says what a training achieved: time a step, throughput and model
// FLOPs utilization; "" for a program that does not say its work.
func workLine(wk *sim.Work, span sim.Time) string {
	if wk == nil || wk.Steps <= 0 || span <= 0 {
		return ""
	}
	secs := span.Seconds()
	perStep := wk.Samples / float64(wk.Steps)
	line := fmt.Sprintf("training: %s of %s: %s a step, ", plural(wk.Steps, "1 step", "%d steps"), count(perStep, "sample"), units.Format(secs/float64(wk.Steps), units.Duration))
	if wk.Tokens > 0 {
		line += fmt.Sprintf("%s tokens/s", rate(wk.Tokens/secs))
	} else {
		line += fmt.Sprintf("%s samples/s", rate(wk.Samples/secs))
	}
	if mfu, ok := wk.MFU(span); ok {
		gpus := plural(wk.GPUs, "the GPU's", "the %d GPUs'")
		line += fmt.Sprintf("; MFU %.1f%% of %s %s %s peak", 100*mfu, gpus, units.Format(wk.PeakFLOPs, units.FLOPRate), wk.DType)
		if mfu > 1 {
			// Long sequences: the convention, not a faster GPU.
			line += " (over 100%: the model FLOPs count attention's masked products whole, as PaLM's MFU does, and causal kernels skip them; docs/model.md)"
		}
	}
	return line
}

// inferenceLine says what a generation achieved: the time to its first
// token, the time a token after it, and the tokens generated a second;
// "" for a run that is not one.
func inferenceLine(res *sim.Result) string {
	first, per, ok := res.TokenTimes()
	wk := res.Program.Work
	if !ok || res.Makespan <= 0 {
		return ""
	}
	line := fmt.Sprintf("inference: %s, %s each: first token at %s", count(wk.Samples, "sequence"), plural(wk.Steps, "1 token", "%d tokens"), first)
	if wk.Steps > 1 {
		line += fmt.Sprintf(", then %s a token", per)
	}
	return line + fmt.Sprintf("; %s tokens/s", rate(wk.Tokens/res.Makespan.Seconds()))
}

// count is "1 sample", "8 samples" or "2.5 samples".
func count(v float64, what string) string {
	if v == 1 {
		return "1 " + what
	}
	if v == math.Trunc(v) && v < 1e15 {
		return strconv.FormatInt(int64(v), 10) + " " + what + "s"
	}
	return strconv.FormatFloat(v, 'g', 6, 64) + " " + what + "s"
}

// rate writes a throughput with three significant digits and k, M or G,
// rounded before the unit is chosen (999,600 is "1M", not "1e+03k").
func rate(v float64) string {
	v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	for _, u := range []struct {
		f    float64
		name string
	}{{1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if v >= u.f && v < 1e3*u.f || u.f == 1e9 && v >= u.f {
			return strconv.FormatFloat(v/u.f, 'f', -1, 64) + u.name
		}
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// nameRuns lists names, writing three or more that count up by one
// (gpu3, gpu4, gpu5) as a range: gpu3-gpu5.
// consecutive reports whether b's number follows a's, with the same
// prefix: gpu7, gpu8.
func consecutive(a, b string) bool {
	p, n, ok := splitNum(a)
	q, m, ok2 := splitNum(b)
	return ok && ok2 && p == q && m == n+1
}

// splitNum splits a name into its prefix and the number that ends it:
// "gpu12" is "gpu", 12; ok is false where no number ends it.
func splitNum(s string) (string, int, bool) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	n, err := strconv.Atoi(s[i:])
	return s[:i], n, err == nil && i < len(s)
}

func nameRuns(names []string) string {
	var out []string
	for i := 0; i < len(names); {
		p, n, ok := splitNum(names[i])
		j := i + 1
		for ok && j < len(names) {
			q, m, ok2 := splitNum(names[j])
			if !ok2 || q != p || m != n+(j-i) {
				break
			}
			j++
		}
		if j-i >= 3 {
			out = append(out, names[i]+"-"+names[j-1])
		} else {
			out = append(out, names[i:j]...)
		}
		i = j
	}
	return strings.Join(out, ", ")
}

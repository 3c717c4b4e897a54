package plots

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"gpusim/sim"
)

// UtilizationBins is how many windows of time a utilization curve averages
// over: each point is the mean over a 200th of the span, the span sampled
// every quarter window (utilizationSamples), so that a periodic workload
// shows each period alike. Adjacent windows a 200th wide, one sample each,
// drew a beat where a period came near two windows: a training step of
// 25.7 ms on a 2.6 s run (windows of 12.9 ms) had its peaks fall from 0.88
// to 0.45 and rise again, over steps that were all the same.
const UtilizationBins = 200

// utilizationSamples is how many samples a utilization window spans.
const utilizationSamples = 4

// maxUtilizationCurves is the most GPU groups (GPUs busy alike share a
// curve) the busy panel draws one by one, each named in the legend.
const maxUtilizationCurves = 8

// addInto adds v to sum element by element (sum nil: a copy of v) and
// returns it; a nil v adds nothing.
func addInto(sum, v []float64) []float64 {
	if v == nil {
		return sum
	}
	if sum == nil {
		return slices.Clone(v)
	}
	for i := range v {
		sum[i] += v[i]
	}
	return sum
}

// sliding is v's mean over k consecutive bins around each, (k-1)/2 before
// it and k/2 after, the window moved inside v at its ends.
func sliding(v []float64, k int) []float64 {
	if v == nil {
		return nil
	}
	out := make([]float64, len(v))
	for i := range v {
		// k values at the ends too, the window moved inside: fewer made
		// the last point of a periodic curve jump (0.88 to 1).
		lo := min(max(0, i-(k-1)/2), max(0, len(v)-k))
		hi := min(len(v), lo+k)
		sum := 0.0
		for _, x := range v[lo:hi] {
			sum += x
		}
		out[i] = sum / float64(hi-lo)
	}
	return out
}

// curve is a utilization curve: bins fine bins over [from, to) from
// measure, averaged over windows of utilizationSamples.
func curve(measure func(bins int) []float64) []float64 {
	return sliding(measure(UtilizationBins*utilizationSamples), utilizationSamples)
}

// Busy returns, for each GPU, the fraction of each of bins equal slices of
// the run during which it computed (a kernel ran on one of its streams) and
// communicated (a collective moved data or a copy ran on one of its
// streams). Overlapping ops count once. A GPU with no such ops has nil.
func Busy(res *sim.Result, bins int) (compute, comm [][]float64) {
	return BusyIn(res, bins, 0, max(res.Makespan, sim.Nanosecond))
}

// BusyIn is Busy over the window [from, to) of the run: ops wholly outside
// it count for nothing.
func BusyIn(res *sim.Result, bins int, from, to sim.Time) (compute, comm [][]float64) {
	m := res.Machine
	width := float64(to-from) / float64(bins)
	binOf := func(t sim.Time) float64 { return float64(t-from) / width }
	type ivl struct{ a, b float64 }
	ci := make([][]ivl, len(m.GPUs))
	mi := make([][]ivl, len(m.GPUs))
	for i := range res.Ops {
		r := &res.Ops[i]
		switch r.Kind {
		case sim.OpKernel:
			ci[r.GPU] = append(ci[r.GPU], ivl{binOf(r.Start), binOf(r.End)})
		case sim.OpCollective:
			mi[r.GPU] = append(mi[r.GPU], ivl{binOf(r.Begin), binOf(r.End)})
		case sim.OpCopy:
			mi[r.GPU] = append(mi[r.GPU], ivl{binOf(r.Start), binOf(r.End)})
		}
	}
	frac := func(iv []ivl) []float64 {
		// Ops wholly outside the window are not drawn (a GPU with
		// none inside has no curve).
		iv = slices.DeleteFunc(iv, func(x ivl) bool { return x.b <= 0 || x.a >= float64(bins) })
		if len(iv) == 0 {
			return nil
		}
		// The union of the intervals, then its share of each bin.
		sort.Slice(iv, func(i, j int) bool { return iv[i].a < iv[j].a })
		var u []ivl
		for _, x := range iv {
			if n := len(u); n > 0 && x.a <= u[n-1].b {
				u[n-1].b = max(u[n-1].b, x.b)
				continue
			}
			u = append(u, x)
		}
		busy := make([]float64, bins)
		for _, x := range u {
			spread(busy, x.a, x.b, 1)
		}
		return busy
	}
	compute = make([][]float64, len(m.GPUs))
	comm = make([][]float64, len(m.GPUs))
	for g := range m.GPUs {
		compute[g], comm[g] = frac(ci[g]), frac(mi[g])
	}
	return compute, comm
}

// LinkLoad returns the mean load of a link direction (res.Links[i]) in
// each of bins equal slices of the run, as a fraction of its capacity.
func LinkLoad(res *sim.Result, i, bins int) []float64 {
	span := max(res.Makespan, sim.Nanosecond)
	return LinkLoadIn(res, i, bins, 0, span)
}

// LinkLoadIn is LinkLoad over the window [from, to) of the run.
func LinkLoadIn(res *sim.Result, i, bins int, from, to sim.Time) []float64 {
	span := max(res.Makespan, sim.Nanosecond)
	width := float64(to-from) / float64(bins)
	l := res.Links[i]
	load := make([]float64, bins)
	for k, pt := range l.Series {
		end := span
		if k+1 < len(l.Series) {
			end = l.Series[k+1].T
		}
		spread(load, float64(pt.T-from)/width, float64(end-from)/width, pt.Load/l.Capacity)
	}
	return load
}

// spread adds v times the overlap of [a, b) (in bins) with each bin.
func spread(bins []float64, a, b, v float64) {
	for k := max(int(math.Floor(a)), 0); k < len(bins) && float64(k) < b; k++ {
		if lo, hi := max(a, float64(k)), min(b, float64(k+1)); hi > lo {
			bins[k] += (hi - lo) * v
		}
	}
}

// busiestIn is busiestLinks within [from, to): the n link directions with
// the most load there (none that carried nothing there), and their loads.
func busiestIn(m *sim.Machine, res *sim.Result, n int, from, to sim.Time) ([]int, [][]float64) {
	type cand struct {
		i    int
		sum  float64
		load []float64
	}
	var cs []cand
	for _, i := range busiestLinks(m, res, len(res.Links)) {
		load := curve(func(bins int) []float64 { return LinkLoadIn(res, i, bins, from, to) })
		sum := 0.0
		for _, v := range load {
			sum += v * res.Links[i].Capacity
		}
		if sum > 0 {
			cs = append(cs, cand{i, sum, load})
		}
	}
	sort.SliceStable(cs, func(a, b int) bool { return cs[a].sum > cs[b].sum })
	var idx []int
	var loads [][]float64
	for _, c := range cs[:min(n, len(cs))] {
		idx, loads = append(idx, c.i), append(loads, c.load)
	}
	return idx, loads
}

// busiestLinks returns the indices in res.Links of the n link directions
// (or joint limits on both directions) that carried the most load (bytes,
// kernel-driven ones at the link's copy rate), busiest first.
func busiestLinks(m *sim.Machine, res *sim.Result, n int) []int {
	var idx []int
	for i, l := range res.Links {
		// Directions, and joint limits on both (they count the bytes of
		// both) where both ran together past one direction's bandwidth.
		if l.Used > 0 && l.Bound(m) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return res.Links[idx[a]].Used > res.Links[idx[b]].Used })
	if len(idx) > n {
		idx = idx[:n]
	}
	return idx
}

// steps turns per-bin values into the points of a step line over [from,
// to] in the axis unit.
func steps(v []float64, from, to, scale float64) plotter.XYs {
	pts := make(plotter.XYs, len(v)+1)
	w := (to - from) / float64(len(v))
	for k, y := range v {
		pts[k] = plotter.XY{X: (from + float64(k)*w) / scale, Y: y}
	}
	pts[len(v)] = plotter.XY{X: to / scale, Y: v[len(v)-1]}
	return pts
}

// Utilization draws, over time, the busy fraction of each GPU (compute and
// communication as separate curves; GPUs whose curves are identical share
// one, named for all of them, "gpu0-gpu7 compute") and the load of the busiest link
// directions as a fraction of their capacity: two plots to stack.
func Utilization(res *sim.Result, title string, links int) ([]*plot.Plot, error) {
	return UtilizationIn(res, title, links, 0, 0)
}

// UtilizationIn is Utilization over the window [from, to) of the run (to
// 0: the makespan), its curves in as many bins as the whole run's, its
// links the busiest within the window.
func UtilizationIn(res *sim.Result, title string, links int, from, to sim.Time) ([]*plot.Plot, error) {
	m := res.Machine
	if title == "" {
		title = res.Program.Name + " on " + m.Name
	}
	if links <= 0 {
		links = 6
	}
	span := max(res.Makespan, sim.Nanosecond)
	if to <= 0 || to > span {
		to = span
	}
	from = min(max(from, 0), to-1)
	unit, scale := windowUnit(from, to) // the timeline's
	line := func(v []float64, n int) (*plotter.Line, error) {
		l, err := plotter.NewLine(steps(v, float64(from), float64(to), scale))
		if err != nil {
			return nil, err
		}
		l.Color = SeriesColor(n)
		l.Width = vg.Points(1.5)
		l.StepStyle = plotter.PostStep
		return l, nil
	}
	compute, comm := BusyIn(res, UtilizationBins*utilizationSamples, from, to)
	for g := range compute {
		compute[g], comm[g] = sliding(compute[g], utilizationSamples), sliding(comm[g], utilizationSamples)
	}
	groups := alike(compute, comm)
	gtitle := title + ": GPU busy fraction"
	if slices.ContainsFunc(groups, func(gs []int) bool { return len(gs) > 1 }) {
		gtitle += " (GPUs busy alike share a curve)"
	}
	gp := newPlot(gtitle, "time ("+unit+")", "busy fraction")
	gp.Y.Min, gp.Y.Max = 0, 1.05
	gp.X.Min, gp.X.Max = float64(from)/scale, float64(to)/scale
	gp.X.Tick.Marker = NiceTicks{N: 12}
	names := make([]string, len(m.GPUs))
	for g := range m.GPUs {
		names[g] = m.GPUs[g].Name
	}
	if len(groups) > maxUtilizationCurves {
		// Too many curves to tell apart by colour or to list (24 GPUs,
		// each its own: 48 legend entries ran off the picture): each GPU
		// thin and grey, and the mean over the GPUs in colour.
		used := 0
		var mc, mm []float64
		for _, gs := range groups {
			for _, g := range gs {
				used++
				for _, v := range [][]float64{compute[g], comm[g]} {
					if v == nil {
						continue
					}
					l, err := line(v, 0)
					if err != nil {
						return nil, err
					}
					l.Color, l.Width = color.Gray{Y: 200}, vg.Points(0.5)
					gp.Add(l)
				}
				mc, mm = addInto(mc, compute[g]), addInto(mm, comm[g])
			}
		}
		for k, v := range [][]float64{mc, mm} {
			if v == nil {
				continue
			}
			for i := range v {
				v[i] /= float64(used)
			}
			l, err := line(v, 0)
			if err != nil {
				return nil, err
			}
			name := fmt.Sprintf("mean of %d GPUs: compute", used)
			if k == 1 {
				l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
				name = fmt.Sprintf("mean of %d GPUs: communication and copies", used)
			}
			gp.Add(l)
			gp.Legend.Add(name, l)
		}
		// The GPUs, not their groups: GPUs busy alike share a group.
		gp.Title.Text = title + fmt.Sprintf(": GPU busy fraction (each of %d GPUs in grey, their mean in colour)", used)
		groups = nil
	}
	for _, gs := range groups {
		g, name := gs[0], nameRuns(names, gs)
		if compute[g] != nil {
			l, err := line(compute[g], g)
			if err != nil {
				return nil, err
			}
			gp.Add(l)
			gp.Legend.Add(name+" compute", l)
		}
		if comm[g] != nil {
			l, err := line(comm[g], g)
			if err != nil {
				return nil, err
			}
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			gp.Add(l)
			gp.Legend.Add(name+" communication and copies", l)
		}
	}
	lp := newPlot(title+": busiest links", "time ("+unit+")", "load / capacity")
	lp.Y.Min, lp.Y.Max = 0, 1.05
	lp.X.Min, lp.X.Max = float64(from)/scale, float64(to)/scale
	lp.X.Tick.Marker = NiceTicks{N: 12}
	var busiest []int
	var loads [][]float64
	if from == 0 && to == span {
		busiest = busiestLinks(m, res, links)
		for _, i := range busiest {
			loads = append(loads, curve(func(bins int) []float64 { return LinkLoadIn(res, i, bins, from, to) }))
		}
	} else {
		busiest, loads = busiestIn(m, res, links, from, to)
	}
	if len(busiest) == 0 {
		if from == 0 && to == span {
			lp.Title.Text += " (none carried any bytes)" // an empty panel, said so
		} else {
			lp.Title.Text += " (none carried any bytes in this window)"
		}
	}
	dashed := hiders(loads)
	nd := 0
	for _, d := range dashed {
		if d {
			nd++
		}
	}
	k := 0
	for n, i := range busiest {
		l, err := line(loads[n], n)
		if err != nil {
			return nil, err
		}
		if dashed[n] {
			// The k-th of nd dashed curves draws 6 points in every
			// 6(nd+1), at its own phase: over each other, every dashed
			// curve and the solid one below them show.
			l.Dashes = []vg.Length{vg.Points(6), vg.Points(6 * float64(nd))}
			l.DashOffs = vg.Points(6 * float64(k))
			k++
		}
		lp.Add(l)
		thumb := *l // the legend's sample: short dashes, so that its color shows
		if dashed[n] {
			thumb.Dashes, thumb.DashOffs = []vg.Length{vg.Points(4), vg.Points(2)}, 0
		}
		lp.Legend.Add(linkLabel(m, res.Links[i]), &thumb)
	}
	// Links that never pass a quarter of their capacity get an axis to
	// their peak (a 0-1 axis flattens a 2% load onto zero); the axis
	// label says so.
	peak := 0.0
	for _, l := range loads {
		for _, v := range l {
			peak = max(peak, v)
		}
	}
	if peak > 0 && peak < 0.25 {
		lp.Y.Max = 1.1 * peak
		lp.Y.Label.Text += " (at most " + strconv.FormatFloat(100*peak, 'g', 2, 64) + "%)"
	}
	return []*plot.Plot{gp, lp}, nil
}

// hiders reports which load curves to dash. Links on one path often carry
// the same load, and a curve is drawn over the ones before it: a curve
// whose every loaded bin lies within 1% of some later curve would not show
// at all. Those later curves are dashed where they cover it, and it shows
// through their gaps.
func hiders(loads [][]float64) []bool {
	dash := make([]bool, len(loads))
	near := func(a, b float64) bool { return math.Abs(a-b) <= 0.01 }
	for i, d := range loads {
		hidden, any := true, false
		for b, x := range d {
			if x <= 0.01 {
				continue // along the axis, where every idle link is
			}
			any = true
			if !slices.ContainsFunc(loads[i+1:], func(e []float64) bool { return b < len(e) && near(x, e[b]) }) {
				hidden = false
				break
			}
		}
		if !hidden || !any {
			continue
		}
		for j := i + 1; j < len(loads); j++ {
			for b, x := range d {
				if x > 0.01 && b < len(loads[j]) && near(x, loads[j][b]) {
					dash[j] = true
					break
				}
			}
		}
	}
	return dash
}

// alike groups the GPUs whose compute and communication curves are both
// identical (an 8-GPU data-parallel run has eight of each, drawn over each
// other under a legend of sixteen), each group in GPU order, groups in
// order of their first GPU. GPUs with neither curve are left out.
func alike(compute, comm [][]float64) [][]int {
	var groups [][]int
	for g := range compute {
		if compute[g] == nil && comm[g] == nil {
			continue
		}
		i := slices.IndexFunc(groups, func(gs []int) bool {
			f := gs[0]
			return (compute[f] == nil) == (compute[g] == nil) && slices.Equal(compute[f], compute[g]) &&
				(comm[f] == nil) == (comm[g] == nil) && slices.Equal(comm[f], comm[g])
		})
		if i < 0 {
			groups = append(groups, []int{g})
			continue
		}
		groups[i] = append(groups[i], g)
	}
	return groups
}

// nameRuns names the GPUs idx (ascending indices into names) with runs of
// consecutive ones as ranges: "gpu0-gpu7", "gpu0-gpu3, gpu6", "gpu2"
// ("left to right" where the names are not a prefix and a number).
func nameRuns(names []string, idx []int) string {
	var parts []string
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && idx[j+1] == idx[j]+1 {
			j++
		}
		switch {
		case j == i:
			parts = append(parts, names[idx[i]])
		case j == i+1:
			parts = append(parts, names[idx[i]], names[idx[j]])
		case numbered(names[idx[i]], names[idx[j]]):
			parts = append(parts, names[idx[i]]+"-"+names[idx[j]])
		default: // names that do not count: "left to right", not "left-right"
			parts = append(parts, names[idx[i]]+" to "+names[idx[j]])
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// numbered reports whether a and b are one prefix and two numbers, as gpu0
// and gpu7, so that "a-b" reads as a range.
func numbered(a, b string) bool {
	pa, pb := strings.TrimRight(a, "0123456789"), strings.TrimRight(b, "0123456789")
	return pa == pb && len(pa) < len(a) && len(pb) < len(b) && !strings.ContainsRune(pa, '-')
}

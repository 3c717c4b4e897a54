package plots

import (
	"fmt"
	"image/color"
	"math"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"gpusim/sim"
)

// TimelineOptions choose what a timeline shows.
type TimelineOptions struct {
	// Title; empty means "SCENARIO on TOPOLOGY".
	Title string
	// From and To bound the window; To zero means the makespan.
	From, To sim.Time
	// Links is how many of the busiest link directions get a lane (0: 6).
	Links int
	// Width is the picture's width, for merging bars narrower than a pixel
	// (0: TimelineWidth).
	Width vg.Length
}

// Lane is one row of a timeline.
type Lane struct {
	Name  string
	Group string // the host or GPU it belongs to, or "links"
	Bars  int    // bars drawn after merging
}

// TimelineInfo describes a timeline's structure, for tests and sizing.
type TimelineInfo struct {
	Lanes  []Lane
	Legend []Kind
	// XMin, XMax are the time axis range in Unit.
	XMin, XMax float64
	Unit       string
	// Height is the picture height that keeps lanes readable.
	Height vg.Length
	// Dropped counts the lanes left out beyond MaxLanes.
	Dropped int
}

// MaxLanes is the most lanes a timeline draws.
const MaxLanes = 400

type bar struct {
	x0, x1 float64 // in the axis unit
	kind   Kind
	level  float64 // link lanes: the load as a fraction of capacity
	// partial bars (the parts of a pixel column's stack: mergeBars) fill
	// the lane's height from base to base+level, as fractions of it.
	partial bool
	base    float64
}

// gantt is the plotter that draws the lanes' bars.
type gantt struct {
	lanes [][]bar
	bands []bool // lanes on a shaded band: every other group
	xmin  float64
	xmax  float64
}

// separator is the hairline at the start of each bar wide enough to show it.
var separator = draw.LineStyle{Color: color.White, Width: vg.Points(0.5)}

// bandColor shades every other group of lanes (a host, a GPU, the links).
var bandColor = color.RGBA{242, 242, 246, 255}

func (g *gantt) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	for i, shaded := range g.bands {
		if !shaded {
			continue
		}
		y := float64(len(g.lanes) - 1 - i)
		pts := []vg.Point{{X: c.Min.X, Y: trY(y - 0.5)}, {X: c.Max.X, Y: trY(y - 0.5)}, {X: c.Max.X, Y: trY(y + 0.5)}, {X: c.Min.X, Y: trY(y + 0.5)}}
		c.FillPolygon(bandColor, c.ClipPolygonY(pts))
	}
	for i, bars := range g.lanes {
		y := float64(len(g.lanes) - 1 - i)
		for _, b := range bars {
			bottom, top := -0.38, 0.38
			switch {
			case b.partial:
				bottom, top = -0.38+0.76*b.base, -0.38+0.76*math.Min(1, b.base+b.level)
			case b.kind == KindTransfer:
				top = -0.38 + 0.76*math.Min(1, b.level)
			}
			x0, x1 := trX(b.x0), trX(b.x1)
			if x1-x0 < 0.75 {
				x1 = x0 + 0.75 // at least a visible sliver
			}
			pts := []vg.Point{{X: x0, Y: trY(y + bottom)}, {X: x1, Y: trY(y + bottom)}, {X: x1, Y: trY(y + top)}, {X: x0, Y: trY(y + top)}}
			c.FillPolygon(kindColor[b.kind], c.ClipPolygonXY(pts))
			if b.kind != KindTransfer && !b.partial && x1-x0 >= 2 && x0 >= c.Min.X {
				// A hairline at the start, so that two ops back to back
				// (two kernels on a stream) read as two bars, not one.
				c.StrokeLine2(separator, x0, trY(y-0.38), x0, trY(y+top))
			}
		}
	}
}

func (g *gantt) DataRange() (xmin, xmax, ymin, ymax float64) {
	return g.xmin, g.xmax, -0.5, float64(len(g.lanes)) - 0.5
}

// mergeBars draws a lane's bars narrower than a pixel as what they add up
// to in each pixel column (origin is the window's start; columns are pixel
// wide from there): a stack, one part per kind in legend order, each as
// tall as the share of the column that kind covers (for link loads, the
// mean load over the column). Columns alike (their parts equal to 1/64 of
// the lane's height) join into one. So a run of tiny kernels with gaps
// between them reads as a lower bar, and kernels alternating with
// collectives as both colours stacked, where merging bars end to end drew
// one bar of whichever kind covered most, across every gap. Bars a pixel
// wide or more are kept as they are. A 10^5-op lane draws at most a few
// rectangles a column.
func mergeBars(bars []bar, pixel, origin float64) []bar {
	sort.SliceStable(bars, func(i, j int) bool { return bars[i].x0 < bars[j].x0 })
	var out []bar
	type column struct {
		c int
		w [len(kindIndexOrder)]float64 // per kind, in kindIndexOrder
	}
	var cols []column // in column order: narrow bars come sorted by start
	at := func(c int) *column {
		// A narrow bar touches at most two columns, at or after the last
		// one's predecessor: look back a few.
		for k := len(cols) - 1; k >= 0 && k >= len(cols)-3; k-- {
			if cols[k].c == c {
				return &cols[k]
			}
			if cols[k].c < c {
				cols = append(cols, column{})
				copy(cols[k+2:], cols[k+1:])
				cols[k+1] = column{c: c}
				return &cols[k+1]
			}
		}
		cols = append(cols, column{})
		copy(cols[1:], cols)
		cols[0] = column{c: c}
		return &cols[0]
	}
	for _, b := range bars {
		if b.x1-b.x0 >= pixel || pixel <= 0 {
			out = append(out, b)
			continue
		}
		weight := 1.0
		if b.kind == KindTransfer {
			weight = b.level
		}
		ki := kindIndex(b.kind)
		// The column the bar starts in (a start on a column's edge, to
		// within rounding, is in the column it opens).
		c0 := int(math.Floor((b.x0-origin)/pixel + 1e-9))
		for c := c0; c <= c0+1; c++ {
			lo, hi := origin+float64(c)*pixel, origin+float64(c+1)*pixel
			if w := math.Min(hi, b.x1) - math.Max(lo, b.x0); w > 0 || c == c0 {
				// A bar of no length (an op that took no time) shows as
				// a sliver, as it did before columns.
				at(c).w[ki] += max(w*weight/pixel, 1e-12*min(weight, 1))
			}
		}
	}
	// Each column's stack, quantized to 1/64 of the lane, from the bottom
	// in legend order; a column over full (bars overlapping in a lane)
	// is scaled to fit.
	const steps = 64
	type stack [len(kindIndexOrder)]int
	stackOf := func(col *column) (st stack, any bool) {
		total := 0.0
		for _, w := range col.w {
			total += w
		}
		scale := 1.0
		if total > 1 {
			scale = 1 / total
		}
		for k, w := range col.w {
			st[k] = int(math.Round(w * scale * steps))
			if w > 0 && st[k] == 0 {
				st[k] = 1 // a sliver, not nothing
			}
			any = any || st[k] > 0
		}
		return st, any
	}
	for i := 0; i < len(cols); {
		st, any := stackOf(&cols[i])
		j := i + 1
		for j < len(cols) && cols[j].c == cols[j-1].c+1 {
			next, _ := stackOf(&cols[j])
			if next != st {
				break
			}
			j++
		}
		if any {
			x0, x1 := origin+float64(cols[i].c)*pixel, origin+float64(cols[j-1].c+1)*pixel
			base := 0
			for k, n := range st {
				if n == 0 {
					continue
				}
				out = append(out, bar{x0: x0, x1: x1, kind: kindIndexOrder[k], partial: true, base: float64(base) / steps, level: float64(n) / steps})
				base += n
			}
		}
		i = j
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].x0 < out[j].x0 })
	return out
}

// kindIndexOrder is the kinds in legend order (kindOrder), as an array
// that sizes mergeBars' per-kind columns and that kindIndex indexes.
var kindIndexOrder = [...]Kind{KindKernel, KindComm, KindCollWait, KindH2D, KindD2H, KindP2P, KindStaged, KindD2D, KindHost, KindAPI, KindWait, KindTransfer}

func kindIndex(k Kind) int {
	for i, x := range kindIndexOrder {
		if x == k {
			return i
		}
	}
	panic("plots: a bar of unknown kind " + string(k))
}

// Timeline draws res as a Gantt chart: a lane per host thread (the host
// side of each call, host work and syncs), per stream and per copy engine
// used (execution), and per busiest link direction (its load), grouped by
// host and GPU; bars colored by kind with a legend; a time axis in a
// readable unit.
func Timeline(res *sim.Result, opt TimelineOptions) (*plot.Plot, *TimelineInfo, error) {
	m, p := res.Machine, res.Program
	from, to := opt.From, opt.To
	if to <= 0 || to > res.Makespan {
		to = res.Makespan
	}
	if res.Makespan == 0 {
		from, to = 0, sim.Nanosecond // an empty run: an empty nanosecond
	}
	if from < 0 || from >= to {
		return nil, nil, fmt.Errorf("empty window: from %s to %s (the run ends at %s)", from, opt.To, res.Makespan)
	}
	unit, scale := windowUnit(from, to)
	x := func(t sim.Time) float64 { return float64(t) / scale }
	width := opt.Width
	if width <= 0 {
		width = TimelineWidth
	}
	pixel := (x(to) - x(from)) / float64(width/vg.Inch*96)
	nlinks := opt.Links
	if nlinks <= 0 {
		nlinks = 6
	}
	info := &TimelineInfo{XMin: x(from), XMax: x(to), Unit: unit}
	var lanes []Lane
	var bars [][]bar
	index := map[string]int{}
	lane := func(name, group string) int {
		if i, ok := index[name]; ok {
			return i
		}
		index[name] = len(lanes)
		lanes = append(lanes, Lane{Name: name, Group: group})
		bars = append(bars, nil)
		return len(lanes) - 1
	}
	used := map[Kind]bool{}
	add := func(l int, start, end sim.Time, k Kind) {
		if end < from || start > to || (end == start && k != KindKernel) {
			return
		}
		if (end == from && start < from) || (start == to && end > to) {
			return // touches the window only at its edge
		}
		start, end = max(start, from), min(end, to)
		bars[l] = append(bars[l], bar{x0: x(start), x1: x(end), kind: k})
		used[k] = true
	}
	// Lanes in a fixed order: hosts with their threads, GPUs with their
	// streams and copy engines, then links.
	for h := range m.Hosts {
		for ti, th := range p.Threads {
			if th.Host == h {
				lane(m.Hosts[h].Name+" "+p.Threads[ti].Name, m.Hosts[h].Name)
			}
		}
	}
	// Streams that run nothing get no lane, nor do unused copy engines.
	ran := make([]bool, len(p.Streams))
	engines := make([]map[int]bool, len(m.GPUs))
	for i := range res.Ops {
		r := &res.Ops[i]
		if r.Stream >= 0 && int(r.Stream) < len(ran) && r.Kind != sim.OpHost && r.Kind != sim.OpSync && r.Kind != sim.OpAwait && r.Kind != sim.OpSignal {
			ran[r.Stream] = true
		}
		if r.Kind == sim.OpCopy && r.Engine >= 0 && r.GPU >= 0 {
			if engines[r.GPU] == nil {
				engines[r.GPU] = map[int]bool{}
			}
			engines[r.GPU][int(r.Engine)] = true
		}
	}
	ceName := func(g, e int) string { return fmt.Sprintf("%s/ce%d", m.GPUs[g].Name, e) }
	for g := range m.GPUs {
		// A GPU's streams by name, so that every GPU lists them alike.
		var names []string
		for si, s := range p.Streams {
			if s.GPU == g && ran[si] {
				names = append(names, p.StreamName(m, si))
			}
		}
		sort.Strings(names)
		for _, n := range names {
			lane(n, m.GPUs[g].Name)
		}
		var es []int
		for e := range engines[g] {
			es = append(es, e)
		}
		sort.Ints(es)
		for _, e := range es {
			lane(ceName(g, e), m.GPUs[g].Name)
		}
	}
	ceLane := func(g, e int) int { return lane(ceName(g, e), m.GPUs[g].Name) }
	for i := range res.Ops {
		r := &res.Ops[i]
		th := lane(m.Hosts[p.Threads[r.Thread].Host].Name+" "+p.Threads[r.Thread].Name, "")
		switch r.Kind {
		case sim.OpHost:
			add(th, r.Start, r.End, KindHost)
			continue
		case sim.OpSync:
			add(th, r.Call, r.Start, KindAPI)
			add(th, r.Start, r.End, KindWait)
			continue
		case sim.OpAwait:
			// No API call: the thread blocks from its call until it
			// takes from the semaphore, at Start (= End).
			add(th, r.Call, r.End, KindWait)
			continue
		case sim.OpSignal:
			continue
		}
		// The call. A pageable copy's lasts until the data is staged: the
		// thread copies chunks into or out of the bounce buffers (CPU time
		// in the summary) and waits for a free one (blocked), in the call,
		// as a profiler shows it.
		add(th, r.Call, max(r.Issued, r.HostEnd), KindAPI)
		st := lane(p.StreamName(m, int(r.Stream)), m.GPUs[r.GPU].Name)
		switch r.Kind {
		case sim.OpKernel:
			add(st, r.Start, r.End, KindKernel)
		case sim.OpCollective:
			add(st, r.Start, r.Begin, KindCollWait)
			add(st, r.Begin, r.End, KindComm)
		case sim.OpCopy:
			k := copyKind(r.Copy)
			add(st, r.Start, r.End, k)
			if r.Engine >= 0 {
				add(ceLane(int(r.GPU), int(r.Engine)), r.Start, r.End, k)
			}
		}
	}
	// The busiest link directions, by bytes, in the machine's order (a
	// link's joint limit on both directions after its directions).
	busy := busiestLinks(m, res, nlinks)
	if from > 0 || to < res.Makespan {
		// A window's busiest, not the run's: those may carry nothing in it.
		busy, _ = busiestIn(m, res, nlinks, from, to)
	}
	sort.Slice(busy, func(a, b int) bool {
		la, lb := res.Links[busy[a]], res.Links[busy[b]]
		if la.Link != lb.Link {
			return la.Link < lb.Link
		}
		return busy[a] < busy[b]
	})
	for _, bi := range busy {
		l := res.Links[bi]
		li := lane(linkLabel(m, l), "links")
		for k, pt := range l.Series {
			end := to
			if k+1 < len(l.Series) {
				end = l.Series[k+1].T
			}
			if pt.Load <= 0 || end <= from || pt.T >= to {
				continue
			}
			bars[li] = append(bars[li], bar{x0: x(max(pt.T, from)), x1: x(min(end, to)), kind: KindTransfer, level: pt.Load / l.Capacity})
			used[KindTransfer] = true
		}
	}
	// Beyond MaxLanes the picture would be taller than anyone reads (and
	// large to hold in memory): keep the first lanes and say so.
	if len(lanes) > MaxLanes {
		info.Dropped = len(lanes) - MaxLanes
		lanes, bars = lanes[:MaxLanes], bars[:MaxLanes]
	}
	g := &gantt{xmin: x(from), xmax: x(to)}
	group, shade := "", true
	for i := range lanes {
		if lanes[i].Group != group {
			group, shade = lanes[i].Group, !shade
		}
		g.bands = append(g.bands, shade)
	}
	for i := range bars {
		merged := mergeBars(bars[i], pixel, x(from))
		lanes[i].Bars = len(merged)
		g.lanes = append(g.lanes, merged)
	}
	info.Lanes = lanes
	title := opt.Title
	if title == "" {
		title = p.Name + " on " + m.Name
	}
	if info.Dropped > 0 {
		title += fmt.Sprintf(" (first %d of %d lanes)", MaxLanes, MaxLanes+info.Dropped)
	}
	pl := newPlot(title, "time ("+unit+")", "")
	pl.Add(g)
	names := make([]string, len(lanes))
	for i, l := range lanes {
		names[len(lanes)-1-i] = l.Name
	}
	pl.NominalY(names...)
	pl.X.Min, pl.X.Max = x(from), x(to)
	pl.X.Tick.Marker = NiceTicks{N: 12}
	pl.Legend.Top = true
	for _, k := range kindOrder {
		if used[k] {
			info.Legend = append(info.Legend, k)
			pl.Legend.Add(string(k), swatch(kindColor[k]))
		}
	}
	pl.Legend.Left = false
	info.Height = Pixels(float64(120 + 22*len(lanes)))
	return pl, info, nil
}

// swatch is a legend thumbnail filled with one color.
type swatch color.RGBA

func (s swatch) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y}}
	c.FillPolygon(color.RGBA(s), c.ClipPolygonY(pts))
}

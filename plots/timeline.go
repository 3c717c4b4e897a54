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
			top := 0.38
			if b.kind == KindTransfer {
				top = -0.38 + 0.76*math.Min(1, b.level)
			}
			x0, x1 := trX(b.x0), trX(b.x1)
			if x1-x0 < 0.75 {
				x1 = x0 + 0.75 // at least a visible sliver
			}
			pts := []vg.Point{{X: x0, Y: trY(y - 0.38)}, {X: x1, Y: trY(y - 0.38)}, {X: x1, Y: trY(y + top)}, {X: x0, Y: trY(y + top)}}
			c.FillPolygon(kindColor[b.kind], c.ClipPolygonXY(pts))
			if b.kind != KindTransfer && x1-x0 >= 2 && x0 >= c.Min.X {
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

// mergeBars merges, per lane, consecutive bars that touch within a pixel
// when either is narrower than a pixel: a 10^5-op timeline draws a few
// thousand rectangles, and what it shows does not change.
func mergeBars(bars []bar, pixel float64) []bar {
	sort.SliceStable(bars, func(i, j int) bool { return bars[i].x0 < bars[j].x0 })
	var out []bar
	// width is, for the last merged bar, the time each kind in it covers
	// (a few kinds: a slice, reused): the kind that covers the most names
	// it (the first in case of a tie).
	type kindWidth struct {
		kind Kind
		w    float64
	}
	var width []kindWidth
	add := func(k Kind, w float64) float64 {
		for i := range width {
			if width[i].kind == k {
				width[i].w += w
				return width[i].w
			}
		}
		width = append(width, kindWidth{k, w})
		return w
	}
	of := func(k Kind) float64 {
		for _, x := range width {
			if x.kind == k {
				return x.w
			}
		}
		return 0
	}
	for _, b := range bars {
		if n := len(out); n > 0 {
			last := &out[n-1]
			narrow := b.x1-b.x0 < pixel || last.x1-last.x0 < pixel
			if narrow && b.x0 <= last.x1+pixel {
				wa, wb := last.x1-last.x0, b.x1-b.x0
				if add(b.kind, wb) > of(last.kind) {
					last.kind = b.kind
				}
				x1 := math.Max(last.x1, b.x1)
				if b.kind == KindTransfer && x1 > last.x0 {
					// A link's load: the mean over the merged span, gaps
					// counting as no load.
					last.level = (last.level*wa + b.level*wb) / (x1 - last.x0)
				}
				last.x1 = x1
				continue
			}
		}
		out = append(out, b)
		width = append(width[:0], kindWidth{b.kind, b.x1 - b.x0})
	}
	return out
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
		merged := mergeBars(bars[i], pixel)
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

// Package plots draws gpusim's results for design reviews with gonum/plot:
// timelines (a Gantt chart of every host thread, stream, copy engine and the
// busiest links), utilization over time, sweep results, topology bandwidth
// heatmaps and benchmark curves, and Graphviz DOT of the machine graph.
// Every function returns the plot (so that tests can read its structure)
// and Write renders it to an io.Writer as PNG, SVG or PDF.
//
//	p, info, err := plots.Timeline(res, plots.TimelineOptions{Title: "quickstart on pcie-2gpu"})
//	err = plots.Write(w, p, plots.TimelineWidth, info.Height, "svg")
package plots

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"gpusim/sim"
)

// Pixels converts a size in pixels of a 96-dpi PNG to a vg length.
func Pixels(px float64) vg.Length { return vg.Length(px) * vg.Inch / 96 }

// TimelineWidth is the width of timelines: 1600 pixels.
var TimelineWidth = Pixels(1600)

// Formats lists the output formats Write accepts.
var Formats = []string{"png", "svg", "pdf"}

// FormatOf returns the format of a file name from its extension, or an
// error naming the valid ones.
func FormatOf(name string) (string, error) {
	i := strings.LastIndexByte(name, '.')
	if i >= 0 {
		f := strings.ToLower(name[i+1:])
		for _, x := range Formats {
			if f == x {
				return f, nil
			}
		}
	}
	return "", fmt.Errorf("%s: a plot's file name ends in .png, .svg or .pdf", name)
}

// Write renders p at w x h in format ("png", "svg" or "pdf"), its legend
// (if any) to the right of the data, where it covers nothing.
func Write(out io.Writer, p *plot.Plot, w, h vg.Length, format string) (err error) {
	defer recoverDraw(&err)
	c, err := newCanvas(w, h, format)
	if err != nil {
		return err
	}
	// The plotting library draws the y tick labels from the canvas's left
	// edge (a long lane label lost its first letter's first pixels) and
	// the data, the last x tick label and a marker at the largest x to its
	// right edge (a heatmap's last column touched the picture's edge).
	dc := draw.Crop(draw.New(c), pictureMargin, -pictureMargin, 0, 0)
	drawPlot(dc, p, legendWidth(dc, p))
	_, err = c.WriteTo(out)
	return err
}

// pictureMargin keeps a single plot's ink off the picture's left and right
// edges, as the tiles of WriteGrid and WriteSheet are padded.
const pictureMargin = vg.Length(6)

// recoverDraw turns a panic of the plotting library (it panics on some
// degenerate axes) into an error, so that a picture gpusim cannot draw is
// reported, not a crash.
func recoverDraw(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("cannot draw the plot: %v", r)
	}
}

// legendGap separates the data area from a legend beside it.
const legendGap = vg.Length(14)

// legendWidth is the width a plot's legend needs beside the data, 0 if it
// has no entries.
func legendWidth(c draw.Canvas, p *plot.Plot) vg.Length {
	if p == nil {
		return 0
	}
	w := p.Legend.Rectangle(c).Size().X
	if w <= 0 {
		return 0
	}
	return w + legendGap + legendMargin
}

// legendMargin keeps the legend's text off the picture's right edge.
const legendMargin = vg.Length(6)

// titleRoom is the room drawPlot leaves above a plot's title.
const titleRoom = vg.Length(5)

// drawPlot draws p in c with its legend in a strip of width side on the
// right, under the title (side 0: no strip).
func drawPlot(c draw.Canvas, p *plot.Plot, side vg.Length) {
	if _, isLog := p.Y.Scale.(plot.LogScale); isLog && p.Y.Label.Text != "" {
		// The plotting library reserves room for a y label at the
		// linear midpoint of a log axis (near its top), so that a long
		// label left the top third of the picture blank. Drawn here
		// instead, centred on the data as the library draws it.
		text, sty := p.Y.Label.Text, p.Y.Label.TextStyle
		descent := sty.FontExtents().Descent
		room := sty.Height(text) + descent + p.Y.Label.Padding
		p.Y.Label.Text = ""
		inner := draw.Crop(c, room, 0, 0, 0)
		drawPlot(inner, p, side)
		p.Y.Label.Text = text
		d := draw.Crop(inner, 0, 0, 0, -titleRoom)
		if side > 0 {
			d = draw.Crop(d, 0, -side, 0, 0)
		}
		data := p.DataCanvas(d)
		mid := data.Center().Y
		sty.Rotation += math.Pi / 2
		c.FillText(sty, vg.Point{X: c.Min.X + sty.Height(text) - descent, Y: mid}, text)
		return
	}
	c = draw.Crop(c, 0, 0, 0, -titleRoom)
	if side <= 0 {
		p.Draw(c)
		return
	}
	leg := p.Legend
	p.Legend = plot.NewLegend() // drawn below, outside the data
	p.Draw(draw.Crop(c, 0, -side, 0, 0))
	p.Legend = leg
	top := vg.Length(0)
	if p.Title.Text != "" {
		top = p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding + legendGap
	}
	leg.Left, leg.Top = true, true
	leg.XOffs, leg.YOffs = 0, 0
	leg.Draw(draw.Crop(c, c.Size().X-side+legendGap, 0, 0, -top))
}

// newCanvas is a w x h canvas of the format, white all over: SVG and PDF
// canvases start transparent, and the plots fill only their own areas, so
// the legends' strips and the margins let a dark slide show through the
// black text drawn on them.
func newCanvas(w, h vg.Length, format string) (vg.CanvasWriterTo, error) {
	c, err := draw.NewFormattedCanvas(w, h, format)
	if err != nil {
		return nil, err
	}
	c.SetColor(color.White)
	var p vg.Path
	p.Move(vg.Point{})
	p.Line(vg.Point{X: w})
	p.Line(vg.Point{X: w, Y: h})
	p.Line(vg.Point{Y: h})
	p.Close()
	c.Fill(p)
	return c, nil
}

// WriteTiles renders plots stacked in one column, each w x h.
func WriteTiles(out io.Writer, ps []*plot.Plot, w, h vg.Length, format string) error {
	return WriteGrid(out, ps, 1, w, h, format)
}

// WriteGrid renders plots in a grid of cols columns, row by row, each tile
// w x h.
func WriteGrid(out io.Writer, ps []*plot.Plot, cols int, w, h vg.Length, format string) (err error) {
	defer recoverDraw(&err)
	if len(ps) == 0 {
		return fmt.Errorf("nothing to draw")
	}
	cols = max(1, min(cols, len(ps)))
	nrows := (len(ps) + cols - 1) / cols
	c, err := newCanvas(w*vg.Length(cols), h*vg.Length(nrows), format)
	if err != nil {
		return err
	}
	rows := make([][]*plot.Plot, nrows)
	for i := range rows {
		rows[i] = make([]*plot.Plot, cols)
	}
	for i, p := range ps {
		rows[i/cols][i%cols] = p
	}
	pad := vg.Points(6)
	canvases := plot.Align(rows, draw.Tiles{Rows: nrows, Cols: cols, PadTop: pad, PadBottom: pad, PadLeft: pad, PadRight: pad, PadX: pad, PadY: pad}, draw.New(c))
	// Reserve the same strip for legends in every tile of a column so
	// that stacked time axes stay aligned.
	side := make([]vg.Length, cols)
	for i, p := range ps {
		side[i%cols] = max(side[i%cols], legendWidth(canvases[i/cols][i%cols], p))
	}
	for i, p := range ps {
		drawPlot(canvases[i/cols][i%cols], p, side[i%cols])
	}
	_, err = c.WriteTo(out)
	return err
}

// newPlot returns a plot with gpusim's defaults: readable text at the
// default size.
func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = font.Length(16)
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = font.Length(13)
		a.Tick.Label.Font.Size = font.Length(11)
	}
	p.Legend.TextStyle.Font.Size = font.Length(11)
	p.Legend.Padding = vg.Points(3)
	p.X.Tick.Marker, p.Y.Tick.Marker = NiceTicks{N: 10}, NiceTicks{N: 8}
	return p
}

// Kind is the category an op is colored by.
type Kind string

// Kinds of bars, in legend order.
const (
	KindKernel   Kind = "kernel"
	KindComm     Kind = "collective"
	KindH2D      Kind = "copy H2D"
	KindD2H      Kind = "copy D2H"
	KindP2P      Kind = "copy P2P"
	KindStaged   Kind = "copy staged"
	KindD2D      Kind = "copy D2D"
	KindHost     Kind = "host work"
	KindAPI      Kind = "API call"
	KindWait     Kind = "host blocked"
	KindTransfer Kind = "link load"
	KindCollWait Kind = "waiting for ranks"
)

// kindOrder is the kinds in legend order.
var kindOrder = kindIndexOrder[:]

// kindColor is a palette chosen to be told apart (Okabe-Ito, plus greys).
var kindColor = map[Kind]color.RGBA{
	KindKernel:   {0, 114, 178, 255},   // blue
	KindComm:     {213, 94, 0, 255},    // vermillion
	KindCollWait: {240, 180, 140, 255}, // light vermillion
	KindH2D:      {0, 158, 115, 255},   // bluish green
	KindD2H:      {86, 180, 233, 255},  // sky blue
	KindP2P:      {204, 121, 167, 255}, // reddish purple
	KindStaged:   {230, 159, 0, 255},   // orange
	KindD2D:      {117, 112, 179, 255}, // purple
	KindHost:     {240, 228, 66, 255},  // yellow
	KindAPI:      {170, 170, 170, 255}, // grey
	KindWait:     {230, 200, 200, 255}, // pale red
	KindTransfer: {90, 90, 90, 255},    // dark grey
}

func copyKind(k sim.CopyKind) Kind {
	switch k {
	case sim.CopyH2D:
		return KindH2D
	case sim.CopyD2H:
		return KindD2H
	case sim.CopyNVLink, sim.CopyP2P:
		return KindP2P
	case sim.CopyStaged:
		return KindStaged
	}
	return KindD2D
}

// timeUnit picks the unit of a time axis for a span, and its length in
// picoseconds: the largest of ns, us, ms and s in which the span is 1 or
// more, so that no tick label reaches 1000 of a unit (a 5 ms run reads
// 0 to 5 ms, not 0 to 5000 us). Every time axis follows this rule: the
// timeline, utilization and (on the middle of its range) replay scatter.
func timeUnit(span sim.Time) (string, float64) {
	switch {
	case span >= sim.Second:
		return "s", 1e12
	case span >= sim.Millisecond:
		return "ms", 1e9
	case span >= sim.Microsecond:
		return "us", 1e6
	}
	return "ns", 1e3
}

// windowUnit is the time unit of an axis over [from, to]: timeUnit's of
// its length, but a window far into the run reads better in a larger
// unit, by timeUnit's rule: 88.5 ms rather than 88500 us.
func windowUnit(from, to sim.Time) (string, float64) {
	unit, scale := timeUnit(to - from)
	for float64(to)/scale >= 1e3 && unit != "s" {
		unit, scale = largerUnit(unit, scale)
	}
	return unit, scale
}

// largerUnit is the time unit after unit: ns, us, ms, s.
func largerUnit(unit string, scale float64) (string, float64) {
	switch unit {
	case "ns":
		return "us", 1e6
	case "us":
		return "ms", 1e9
	case "ms":
		return "s", 1e12
	}
	return unit, scale
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// linkLabel names a link direction for a lane or legend: "gpu0->sw0 pcie"
// for a link the topology left unnamed, "NAME gpu0->sw0" otherwise.
func linkLabel(m *sim.Machine, l sim.LinkStats) string {
	lk := m.Links[l.Link]
	a, z := m.Nodes[lk.A].Name, m.Nodes[lk.B].Name
	if l.Reverse {
		a, z = z, a
	}
	arrow, both := "->", ""
	if l.Both {
		arrow, both = "<->", " both ways"
	}
	if lk.Name == "link:"+m.Nodes[lk.A].Name+"-"+m.Nodes[lk.B].Name {
		return fmt.Sprintf("%s%s%s %s%s", a, arrow, z, lk.Kind, both)
	}
	return fmt.Sprintf("%s %s%s%s%s", strings.TrimPrefix(lk.Name, "link:"), a, arrow, z, both)
}

// shortNumber writes v as the tables print it: 10,000 and more in
// thousands, millions, ... with a suffix (10k, 20M), less as written (0.01,
// 500), never with an exponent.
func shortNumber(v float64) string {
	div, suffix := siScale(v)
	return strconv.FormatFloat(v/div, 'f', -1, 64) + suffix
}

// siScale is the divisor and suffix that write v as the tables do: 1 and
// none under 10,000, else thousands (k), millions (M), billions (G) or
// trillions (T), the largest that v reaches.
func siScale(v float64) (float64, string) {
	v = math.Abs(v)
	if v < 1e4 {
		return 1, ""
	}
	for _, u := range []struct {
		d float64
		s string
	}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}} {
		if v >= u.d {
			return u.d, u.s
		}
	}
	return 1e3, "k"
}

// NiceTicks labels about N evenly spaced round values (1, 2 or 5 times a
// power of ten apart), with unlabelled minor ticks between them.
type NiceTicks struct{ N int }

// Ticks implements plot.Ticker.
func (t NiceTicks) Ticks(lo, hi float64) []plot.Tick {
	n := t.N
	if n < 2 {
		n = 10
	}
	if !(hi > lo) || !finite(lo) || !finite(hi) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, f := range []float64{1, 2, 5, 10} {
		if f*mag >= raw*(1-1e-6) {
			step = f * mag
			break
		}
	}
	minor := step / 5
	if step/mag == 2 {
		minor = step / 4
	}
	// Values of 10,000 or more are labelled in thousands, millions, ...
	// with a suffix, as the tables print them (39.8M, not 39800000).
	div, suffix := siScale(math.Max(math.Abs(lo), math.Abs(hi)))
	var ts []plot.Tick
	first := math.Ceil(lo/minor-1e-9) * minor
	for k := 0; ; k++ {
		v := first + float64(k)*minor
		if v > hi+minor*1e-9 || k > 10000 {
			break
		}
		// Snap to the grid to print 0.3, not 0.30000000000000004.
		v = math.Round(v/minor) * minor
		tk := plot.Tick{Value: v}
		if r := v / step; math.Abs(r-math.Round(r)) < 1e-6 {
			// As many decimals as the step needs: 88.5, 50.000002.
			dec := max(0, int(math.Ceil(-math.Log10(step/div)-1e-9)))
			tk.Label = strconv.FormatFloat(math.Round(r)*step/div, 'f', dec, 64)
			if strings.Contains(tk.Label, ".") {
				tk.Label = strings.TrimRight(strings.TrimRight(tk.Label, "0"), ".")
			}
			if tk.Label != "0" {
				tk.Label += suffix
			}
		}
		ts = append(ts, tk)
	}
	return ts
}

// WriteSheet renders plots of different sizes in a grid of cols columns,
// each w wide; hs are their heights, and a row is as high as its tallest.
// Each plot is drawn at its own height, at the top of its row, and
// unlike WriteGrid axes are not aligned: for independent plots such as the
// matrices of a benchmark.
//
// Heatmaps (Heatmap) are sized by their matrix's shape: every one gets
// cells of the same size, the largest that fits each in its w x h tile
// and no wider than cellAspect times their height, so that a 1x8 matrix is
// a strip as wide as an 8x8 one beside it, and a 1x1 one a single cell,
// not a bar across the tile. A heatmap with no value in any cell (a test
// of pairs of GPUs on a machine of one) is left out, and a line at the top
// names those left out; when every plot is such a heatmap, all are drawn.
func WriteSheet(out io.Writer, ps []*plot.Plot, cols int, w vg.Length, hs []vg.Length, format string) (err error) {
	defer recoverDraw(&err)
	if len(ps) == 0 || len(hs) != len(ps) {
		return fmt.Errorf("nothing to draw")
	}
	sh := layoutSheet(ps, cols, w, hs)
	c, err := newCanvas(sh.size.X, sh.size.Y, format)
	if err != nil {
		return err
	}
	dc := draw.New(c)
	for i, line := range sh.note {
		sty := sh.noteStyle
		sty.XAlign, sty.YAlign = draw.XLeft, draw.YTop
		dc.FillText(sty, vg.Point{X: sheetPad, Y: sh.size.Y - sheetPad - vg.Length(i)*sh.noteLine}, line)
	}
	left, side := alignColumn(sh, cols)
	for k, p := range sh.plots {
		tile := draw.Canvas{Canvas: dc.Canvas, Rectangle: sh.tiles[k]}
		if side == nil {
			drawPlot(tile, p, legendWidth(tile, p))
			continue
		}
		drawPlot(draw.Crop(tile, left[k], 0, 0, 0), p, *side)
	}
	_, err = c.WriteTo(out)
	return err
}

// alignColumn lines up the time axes of a sheet of one column of plots
// (a replay's predicted and measured timelines): every plot gets the
// widest legend strip, and each is moved right by what its y axis (lane
// names) is narrower than the widest, so that one instant is at one x in
// all. Heatmaps, or several columns: nil, each drawn as it is.
func alignColumn(sh *sheet, cols int) (left []vg.Length, side *vg.Length) {
	if cols != 1 || len(sh.plots) < 2 {
		return nil, nil
	}
	s := vg.Length(0)
	for k, p := range sh.plots {
		if _, ok := matrixOf(p); ok {
			return nil, nil
		}
		s = max(s, legendWidth(draw.Canvas{Rectangle: sh.tiles[k]}, p))
	}
	data := make([]vg.Length, len(sh.plots))
	most := vg.Length(0)
	for k, p := range sh.plots {
		c := draw.Crop(draw.Canvas{Rectangle: sh.tiles[k]}, 0, 0, 0, -titleRoom)
		if s > 0 {
			c = draw.Crop(c, 0, -s, 0, 0)
		}
		data[k] = p.DataCanvas(c).Min.X - c.Min.X
		most = max(most, data[k])
	}
	left = make([]vg.Length, len(sh.plots))
	for k := range left {
		left[k] = most - data[k]
	}
	return left, &s
}

// sheetPad separates the tiles of WriteSheet from each other and from the
// picture's edges.
const sheetPad = vg.Length(8)

// cellAspect is the most a heatmap cell of WriteSheet is wider than high.
const cellAspect = 2.5

// sheet is WriteSheet's layout.
type sheet struct {
	size      vg.Point       // the picture's
	plots     []*plot.Plot   // the plots drawn, in order
	tiles     []vg.Rectangle // where each is drawn (title and axes included)
	note      []string       // lines naming the heatmaps left out
	noteStyle draw.TextStyle // their text
	noteLine  vg.Length      // the height of one
}

// matrixOf returns the shape a heatmap's x axis records, if p is one.
func matrixOf(p *plot.Plot) (matrixTicks, bool) {
	m, ok := p.X.Tick.Marker.(matrixTicks)
	return m, ok && m.rows > 0 && m.cols > 0
}

// layoutSheet places WriteSheet's plots; see WriteSheet.
func layoutSheet(ps []*plot.Plot, cols int, w vg.Length, hs []vg.Length) *sheet {
	sh := &sheet{noteStyle: newPlot("", "", "").Legend.TextStyle}
	var keep []int
	var left []string
	for i, p := range ps {
		if m, ok := matrixOf(p); ok && m.empty {
			left = append(left, m.name)
			continue
		}
		keep = append(keep, i)
	}
	if len(keep) == 0 {
		keep, left = nil, nil
		for i := range ps {
			keep = append(keep, i)
		}
	}
	cols = max(1, min(cols, len(keep)))
	sh.size.X = w * vg.Length(cols)
	if len(left) > 0 {
		sh.note = wrapWords("Left out, as no cell has a value:", left, sh.size.X-2*sheetPad, sh.noteStyle)
		sh.noteLine = sh.noteStyle.Rectangle("Mg").Size().Y * 1.2
	}
	var rowH []vg.Length
	for k, i := range keep {
		if k%cols == 0 {
			rowH = append(rowH, 0)
		}
		rowH[len(rowH)-1] = max(rowH[len(rowH)-1], hs[i])
	}
	noteH := vg.Length(0)
	if len(sh.note) > 0 {
		noteH = vg.Length(len(sh.note))*sh.noteLine + sheetPad
	}
	sh.size.Y = noteH
	for _, h := range rowH {
		sh.size.Y += h
	}
	// Each plot's slot: its column, its own height from the top of its row.
	top := sh.size.Y - noteH
	slots := make([]vg.Rectangle, len(keep))
	for k, i := range keep {
		if k > 0 && k%cols == 0 {
			top -= rowH[k/cols-1]
		}
		x0 := w * vg.Length(k%cols)
		slots[k] = vg.Rectangle{Min: vg.Point{X: x0 + sheetPad, Y: top - hs[i] + sheetPad}, Max: vg.Point{X: x0 + w - sheetPad, Y: top - sheetPad}}
	}
	// Heatmaps: one cell size for all, the largest every slot holds.
	type fit struct{ overX, overY vg.Length }
	fits := make([]*fit, len(keep))
	cellW, cellH := vg.Length(math.Inf(1)), vg.Length(math.Inf(1))
	for k, i := range keep {
		m, ok := matrixOf(ps[i])
		if !ok {
			continue
		}
		c := draw.Crop(draw.Canvas{Rectangle: slots[k]}, 0, 0, 0, -titleRoom)
		d := ps[i].DataCanvas(c)
		f := &fit{overX: c.Size().X - d.Size().X, overY: slots[k].Size().Y - d.Size().Y}
		fits[k] = f
		cellW = min(cellW, d.Size().X/vg.Length(m.cols))
		cellH = min(cellH, d.Size().Y/vg.Length(m.rows))
	}
	cellW = min(cellW, cellAspect*cellH)
	tiles := make([]vg.Rectangle, len(keep))
	for k, i := range keep {
		r := slots[k]
		if f := fits[k]; f != nil && cellW > 0 && cellH > 0 {
			m, _ := matrixOf(ps[i])
			tw := tileWidth(ps[i], r, f.overX, vg.Length(m.cols)*cellW)
			th := min(r.Size().Y, f.overY+vg.Length(m.rows)*cellH)
			mid := (r.Min.X + r.Max.X) / 2
			r = vg.Rectangle{Min: vg.Point{X: mid - tw/2, Y: r.Max.Y - th}, Max: vg.Point{X: mid + tw/2, Y: r.Max.Y}}
		}
		tiles[k] = r
	}
	// Heatmaps take less than their slots (one cell size for all): each
	// row of the sheet is as tall as its tallest tile, not its slots, so
	// that no band of white is left under a row (nvbandwidth's 8x8
	// matrices left half the picture white).
	shrink := vg.Length(0) // how much the rows above have given up
	for k := 0; k < len(keep); k += cols {
		row := tiles[k:min(k+cols, len(keep))]
		need := vg.Length(0)
		for _, r := range row {
			need = max(need, r.Size().Y+2*sheetPad)
		}
		for j := range row {
			row[j].Min.Y += shrink
			row[j].Max.Y += shrink
		}
		shrink += rowH[k/cols] - need
	}
	for k, i := range keep {
		tiles[k].Min.Y -= shrink
		tiles[k].Max.Y -= shrink
		sh.plots = append(sh.plots, ps[i])
		sh.tiles = append(sh.tiles, tiles[k])
	}
	sh.size.Y -= shrink
	return sh
}

// tileWidth is the width, at most slot's, of a tile in which p's data
// area is data wide. That is the axes' width (over) more, unless an x axis
// label wider than the data widens the picture around it: then the
// narrowest tile that fits, found by bisection (the data's width grows
// with the tile's).
func tileWidth(p *plot.Plot, slot vg.Rectangle, over, data vg.Length) vg.Length {
	dataIn := func(w vg.Length) vg.Length {
		r := slot
		r.Max.X = r.Min.X + w
		return p.DataCanvas(draw.Crop(draw.Canvas{Rectangle: r}, 0, 0, 0, -titleRoom)).Size().X
	}
	lo, hi := over+data, slot.Size().X
	if lo >= hi {
		return hi
	}
	if dataIn(lo) >= data-0.01 {
		return lo
	}
	for range 40 {
		mid := (lo + hi) / 2
		if dataIn(mid) >= data {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// wrapWords writes lead and then words joined by ", " in lines no wider
// than width (a word wider than that gets a line of its own).
func wrapWords(lead string, words []string, width vg.Length, sty draw.TextStyle) []string {
	lines := []string{lead}
	for k, wd := range words {
		if k < len(words)-1 {
			wd += ","
		}
		last := &lines[len(lines)-1]
		if sty.Width(*last+" "+wd) <= width {
			*last += " " + wd
			continue
		}
		lines = append(lines, wd)
	}
	return lines
}

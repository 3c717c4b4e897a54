package plots

import (
	"bytes"
	"image/png"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// matrix is a heatmap of rows x cols cells of value v (NaN: no value, as
// nvbandwidth's N/A), sized as gpusim nvbandwidth sizes it.
func matrix(t *testing.T, name string, rows, cols int, v float64) (*plot.Plot, vg.Length) {
	t.Helper()
	var rs, cs []string
	vals := make([][]float64, rows)
	for r := range rows {
		rs = append(rs, string(rune('0'+r)))
		for range cols {
			vals[r] = append(vals[r], v)
		}
	}
	for c := range cols {
		cs = append(cs, string(rune('0'+c)))
	}
	p, err := Heatmap(name+"\nmachine, predicted", "GPU (column)", "CPU (row)", rs, cs, vals, nil, "GB/s")
	if err != nil {
		t.Fatal(err)
	}
	p.Title.TextStyle.Font.Size = 12
	return p, Pixels(float64(130 + 48*rows))
}

// TestSheetSizesMatricesByShape: on a sheet of heatmaps, a 1x8 matrix
// beside an 8x8 one is a strip of the same cells, not stretched to the
// 8x8's height; a 1x1 matrix is one cell, not a bar across its tile; every
// cell of the sheet has one size; a matrix with no value is left out and
// named at the top.
func TestSheetSizesMatricesByShape(t *testing.T) {
	var ps []*plot.Plot
	var hs []vg.Length
	for _, m := range []struct {
		name       string
		rows, cols int
		v          float64
	}{
		{"h2d", 1, 8, 55.4}, {"d2d", 8, 8, 393}, {"latency_host", 1, 8, 2000}, {"latency_d2d", 8, 8, 800},
		{"one", 1, 1, 393}, {"none", 1, 1, math.NaN()},
	} {
		p, h := matrix(t, m.name, m.rows, m.cols, m.v)
		ps, hs = append(ps, p), append(hs, h)
	}
	w := Pixels(672)
	sh := layoutSheet(ps, 2, w, hs)
	if len(sh.plots) != 5 {
		t.Fatalf("%d plots drawn, want 5: the one with no value left out", len(sh.plots))
	}
	if note := strings.Join(sh.note, " "); !strings.Contains(note, "none") || strings.Contains(note, "h2d") {
		t.Errorf("note %q, want it to name only the matrix with no value", note)
	}
	var cellW, cellH []vg.Length
	shapes := [][2]int{{1, 8}, {8, 8}, {1, 8}, {8, 8}, {1, 1}}
	for k, p := range sh.plots {
		r := sh.tiles[k]
		d := p.DataCanvas(draw.Crop(draw.Canvas{Rectangle: r}, 0, 0, 0, -titleRoom))
		cellW = append(cellW, d.Size().X/vg.Length(shapes[k][1]))
		cellH = append(cellH, d.Size().Y/vg.Length(shapes[k][0]))
		// Inside its column and the picture.
		col := vg.Length(k % 2)
		if r.Min.X < col*w || r.Max.X > (col+1)*w || r.Min.Y < 0 || r.Max.Y > sh.size.Y {
			t.Errorf("%d: tile %v outside its column or the picture (%v)", k, r, sh.size)
		}
	}
	for k := range cellW {
		if math.Abs(float64(cellW[k]-cellW[0])) > 0.5 || math.Abs(float64(cellH[k]-cellH[0])) > 0.5 {
			t.Errorf("matrix %d: cells %.1f x %.1f, matrix 0's %.1f x %.1f: want one size", k, cellW[k], cellH[k], cellW[0], cellH[0])
		}
	}
	if cellW[0] > cellAspect*cellH[0]+0.5 {
		t.Errorf("cells %.1f x %.1f: wider than %g times their height", cellW[0], cellH[0], cellAspect)
	}
	// The 1x8 strip beside the 8x8 matrix is no higher than it was
	// given, not stretched to the 8x8's height.
	if h1, h8 := sh.tiles[2].Size().Y, sh.tiles[3].Size().Y; h1 > hs[2] || h1 >= h8 {
		t.Errorf("the 1x8 tile is %.0f high (given %.0f) beside the 8x8's %.0f: stretched", h1, hs[2], h8)
	}
	// No row of the sheet is taller than its tallest tile and the pads
	// around it, and the rows abut: the picture is their sum (the
	// matrices use less than their slots; the white was left under them).
	rows := [][]int{{0, 1}, {2, 3}, {4}}
	total := vg.Length(0)
	prevBottom := sh.size.Y - vg.Length(len(sh.note))*sh.noteLine
	if len(sh.note) > 0 {
		prevBottom -= sheetPad
	}
	for _, row := range rows {
		top, bottom := vg.Length(math.Inf(-1)), vg.Length(math.Inf(1))
		for _, k := range row {
			top, bottom = max(top, sh.tiles[k].Max.Y), min(bottom, sh.tiles[k].Min.Y)
		}
		if math.Abs(float64(prevBottom-(top+sheetPad))) > 0.01 {
			t.Errorf("row %v starts %.1f below the row above, want %v (the pad)", row, prevBottom-top, sheetPad)
		}
		total += top - bottom + 2*sheetPad
		prevBottom = bottom - sheetPad
	}
	if math.Abs(float64(prevBottom)) > 0.01 {
		t.Errorf("%.1f left under the last row, want none", prevBottom)
	}
	var a, b bytes.Buffer
	for _, buf := range []*bytes.Buffer{&a, &b} {
		if err := WriteSheet(buf, ps, 2, w, hs, "png"); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two drawings of one sheet differ")
	}
	// Every matrix without a value: all drawn (there is nothing else), no
	// note.
	p1, h1 := matrix(t, "n1", 1, 1, math.NaN())
	p2, h2 := matrix(t, "n2", 1, 1, math.NaN())
	if sh := layoutSheet([]*plot.Plot{p1, p2}, 2, w, []vg.Length{h1, h2}); len(sh.plots) != 2 || len(sh.note) != 0 {
		t.Errorf("only empty matrices: %d drawn, note %q; want both drawn, no note", len(sh.plots), sh.note)
	}
}

// TestColumnSharesItsTimeAxis: two plots stacked in one column, one with
// long lane names and a wide legend, the other with short ones, have their
// data areas at the same x, left and right, as a replay's predicted and
// measured timelines must (one instant at one place in both).
func TestColumnSharesItsTimeAxis(t *testing.T) {
	a, b := laneColumn(t)
	w, h := Pixels(1200), Pixels(300)
	sh := layoutSheet([]*plot.Plot{a, b}, 1, w, []vg.Length{h, h})
	left, side := alignColumn(sh, 1)
	if side == nil {
		t.Fatal("a column of two plots was not aligned")
	}
	var x0, x1 []vg.Length
	for k, p := range sh.plots {
		c := draw.Crop(draw.Crop(draw.Canvas{Rectangle: sh.tiles[k]}, left[k], 0, 0, 0), 0, 0, 0, -titleRoom)
		d := p.DataCanvas(draw.Crop(c, 0, -*side, 0, 0))
		x0, x1 = append(x0, d.Min.X), append(x1, d.Max.X)
	}
	if math.Abs(float64(x0[0]-x0[1])) > 0.01 || math.Abs(float64(x1[0]-x1[1])) > 0.01 {
		t.Errorf("data areas from %.1f to %.1f and from %.1f to %.1f: want one", x0[0], x1[0], x0[1], x1[1])
	}
	if left[0] != 0 || left[1] <= 0 {
		t.Errorf("moved right by %v: want only the plot with short names moved", left)
	}
}

// TestColumnSharesItsTimeAxisInPixels draws such a column and finds, in
// each half of the picture, the x axis line (the longest dark horizontal
// run): both must start and end at the same pixel, give or take one.
func TestColumnSharesItsTimeAxisInPixels(t *testing.T) {
	a, b := laneColumn(t)
	h := Pixels(300)
	var buf bytes.Buffer
	if err := WriteSheet(&buf, []*plot.Plot{a, b}, 1, Pixels(1200), []vg.Length{h, h}, "png"); err != nil {
		t.Fatal(err)
	}
	im, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	axis := func(y0, y1 int) (int, int) {
		best, bx0, bx1 := 0, 0, 0
		for y := y0; y < y1; y++ {
			run := 0
			for x := im.Bounds().Min.X; x < im.Bounds().Max.X; x++ {
				r, g, bl, _ := im.At(x, y).RGBA()
				if r+g+bl < 3*0x8000 {
					run++
					if run > best {
						best, bx0, bx1 = run, x-run+1, x
					}
				} else {
					run = 0
				}
			}
		}
		return bx0, bx1
	}
	mid := im.Bounds().Dy() / 2
	ax0, ax1 := axis(0, mid)
	bx0, bx1 := axis(mid, im.Bounds().Dy())
	if ax1-ax0 < 500 || bx1-bx0 < 500 {
		t.Fatalf("x axes %d to %d and %d to %d: want lines of 500 pixels or more in each half", ax0, ax1, bx0, bx1)
	}
	if abs(ax0-bx0) > 1 || abs(ax1-bx1) > 1 {
		t.Errorf("x axes from %d to %d and from %d to %d: want one", ax0, ax1, bx0, bx1)
	}
}

func abs(x int) int { return max(x, -x) }

// laneColumn is two plots for a column: one with long lane names and a
// short legend, the other with short names and a long legend.
func laneColumn(t *testing.T) (*plot.Plot, *plot.Plot) {
	mk := func(lanes []string, legend string) *plot.Plot {
		p := newPlot("t", "time (ms)", "")
		p.NominalY(lanes...)
		p.X.Min, p.X.Max = 0, 10
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 10, Y: 1}})
		if err != nil {
			t.Fatal(err)
		}
		p.Add(l)
		p.Legend.Add(legend, l)
		return p
	}
	return mk([]string{"cpu0 a-very-long-thread-name", "gpu0/compute"}, "kernel"), mk([]string{"t", "s"}, "a much longer legend entry than the other")
}

package plots

import (
	"bytes"
	"image/color"
	"image/png"
	"testing"

	"gpusim/sim"
	"gpusim/topologies"
)

// Two kernels back to back on one stream read as two bars: a light
// hairline parts them, where the lane would otherwise be one bar of the
// kernel color.
func TestBackToBackBarsAreParted(t *testing.T) {
	tp, err := topologies.Load("t.yaml", []byte("name: one\nhosts: [{name: cpu0}]\ngpus: [{name: gpu0, model: L40S}]\nlinks: [{ends: [gpu0, cpu0], type: pcie4x16}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	us := sim.Microsecond
	res := &sim.Result{
		Machine:  tp.Machine,
		Program:  &sim.Program{Name: "two", Threads: []sim.Thread{{Name: "main"}}, Streams: []sim.Stream{{GPU: 0, Name: "s"}}},
		Makespan: 20 * us,
		Ops: []sim.OpRecord{
			{ID: "a", Kind: sim.OpKernel, Stream: 0, GPU: 0, Call: 0, Issued: 0, HostEnd: 0, Start: 0, Begin: 0, End: 10 * us},
			{ID: "b", Kind: sim.OpKernel, Stream: 0, GPU: 0, Call: 0, Issued: 0, HostEnd: 0, Start: 10 * us, Begin: 10 * us, End: 20 * us},
		},
	}
	p, info, err := Timeline(res, TimelineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, p, TimelineWidth, info.Height, "png"); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	k := kindColor[KindKernel]
	isKernel := func(c color.Color) bool {
		r, g, bl, _ := c.RGBA()
		// Two abutting bars leave a faint seam (43 of 255 lighter in red
		// here): not enough to tell them apart, so it counts as the bar.
		near := func(a uint32, b uint8) bool { d := int(a>>8) - int(b); return d > -64 && d < 64 }
		return near(r, k.R) && near(g, k.G) && near(bl, k.B)
	}
	rows, parted := 0, 0
	bd := img.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		// Runs of kernel color along the row, 100 pixels or longer (the
		// bars; the legend's swatch is shorter).
		runs, n := 0, 0
		for x := bd.Min.X; x <= bd.Max.X; x++ {
			if x < bd.Max.X && isKernel(img.At(x, y)) {
				n++
				continue
			}
			if n >= 100 {
				runs++
			}
			n = 0
		}
		if runs > 0 {
			rows++
		}
		if runs == 2 {
			parted++
		}
	}
	if rows == 0 || parted < rows/2 {
		t.Errorf("%d of the %d rows with kernel color show two bars; want most of them", parted, rows)
	}
}

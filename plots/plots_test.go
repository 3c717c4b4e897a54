package plots_test

import (
	"bytes"
	"fmt"
	"html"
	"image/png"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"

	"gpusim/plots"
	"gpusim/scenarios"
	"gpusim/sim"
	"gpusim/topologies"
)

// A PCIe Gen4 box: two GPUs under one switch, the host above it.
const twoGPU = `
name: box
hosts:
  - {name: cpu0, cores: 8}
gpus:
  - {name: gpu0, model: L40S, host: cpu0}
  - {name: gpu1, model: L40S, host: cpu0}
switches:
  - {name: sw0, kind: pcie, p2p: true}
links:
  - {ends: [gpu0, sw0], type: pcie4x16}
  - {ends: [gpu1, sw0], type: pcie4x16}
  - {ends: [sw0, cpu0], type: pcie4x16}
`

// gpu0 computes 10 ms while a 100 MB pinned copy feeds it over PCIe
// (about 4 ms at 26 GB/s); gpu1 computes 4 ms; the thread then syncs.
// gpu1/idle is declared by a wait but runs no op.
const fixed = `
name: fixed
topology: topo.yaml
threads:
  - name: main
    host: cpu0
    ops:
      - kernel: {id: k0, stream: gpu0/compute, duration: 10 ms}
      - copy: {id: c1, from: cpu0, to: gpu0, bytes: 100 MB, memory: pinned, stream: gpu0/copy}
      - kernel: {id: k1, stream: gpu1/compute, duration: 4 ms}
      - sync: {stream: gpu0/compute}
      - sync: {stream: gpu1/compute}
`

func run(t testing.TB, topo, scen string) *sim.Result {
	t.Helper()
	sc, err := scenarios.Load("scen.yaml", []byte(scen), scenarios.Options{
		ReadFile: func(string) ([]byte, error) { return []byte(topo), nil },
	})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	res, err := sim.Run(sc.Topology.Machine, sc.Program)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return res
}

func laneNames(info *plots.TimelineInfo) []string {
	var n []string
	for _, l := range info.Lanes {
		n = append(n, l.Name)
	}
	return n
}

func TestTimelineStructure(t *testing.T) {
	res := run(t, twoGPU, fixed)
	p, info, err := plots.Timeline(res, plots.TimelineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Hosts with their threads, then each GPU's streams and copy engines
	// in the machine's order, then the link directions that carried bytes
	// (the copy's path: cpu0 -> sw0 -> gpu0), in link order.
	want := []string{"cpu0 main", "gpu0/compute", "gpu0/copy", "gpu0/ce0", "gpu1/compute", "sw0->gpu0 pcie", "cpu0->sw0 pcie"}
	if got := laneNames(info); !reflect.DeepEqual(got, want) {
		t.Errorf("lanes = %q, want %q", got, want)
	}
	groups := []string{"cpu0", "gpu0", "gpu0", "gpu0", "gpu1", "links", "links"}
	for i, l := range info.Lanes {
		if i < len(groups) && l.Group != groups[i] {
			t.Errorf("lane %s in group %q, want %q", l.Name, l.Group, groups[i])
		}
		if l.Bars == 0 {
			t.Errorf("lane %s has no bars; every op of the run is in the window", l.Name)
		}
	}
	// The y axis names the lanes top to bottom.
	ticks := p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max)
	var labels []string
	for i := len(ticks) - 1; i >= 0; i-- {
		labels = append(labels, ticks[i].Label)
	}
	if !reflect.DeepEqual(labels, want) {
		t.Errorf("y tick labels top to bottom = %q, want %q", labels, want)
	}
	// Only the kinds the run has, in the legend's fixed order.
	wantLegend := []plots.Kind{plots.KindKernel, plots.KindH2D, plots.KindAPI, plots.KindWait, plots.KindTransfer}
	if !reflect.DeepEqual(info.Legend, wantLegend) {
		t.Errorf("legend = %q, want %q", info.Legend, wantLegend)
	}
	// The run is a little over 10 ms (the kernel plus API calls): the axis
	// is in ms from 0 to the makespan.
	if info.Unit != "ms" || p.X.Label.Text != "time (ms)" {
		t.Errorf("unit %q, label %q; want ms", info.Unit, p.X.Label.Text)
	}
	if info.XMin != 0 || p.X.Min != 0 {
		t.Errorf("x starts at %g (axis %g), want 0", info.XMin, p.X.Min)
	}
	if info.XMax < 10 || info.XMax > 10.1 || p.X.Max != info.XMax {
		t.Errorf("x ends at %g (axis %g), want the makespan, just over 10 ms", info.XMax, p.X.Max)
	}
	if math.Abs(info.XMax-float64(res.Makespan)/1e9) > 1e-9 {
		t.Errorf("x ends at %g ms, the makespan is %s", info.XMax, res.Makespan)
	}
	if p.Title.Text != "fixed on box" {
		t.Errorf("title %q, want the scenario and topology names", p.Title.Text)
	}
}

func TestTimelineWindow(t *testing.T) {
	res := run(t, twoGPU, fixed)
	ms := sim.Millisecond
	// 5 ms to 6 ms: only gpu0's long kernel and the thread's sync run then;
	// the copy (done by about 4 ms) and gpu1's 4 ms kernel do not.
	_, info, err := plots.Timeline(res, plots.TimelineOptions{From: 5 * ms, To: 6 * ms})
	if err != nil {
		t.Fatal(err)
	}
	if info.Unit != "ms" || info.XMin != 5 || info.XMax != 6 {
		t.Errorf("axis %g..%g %s, want 5..6 ms", info.XMin, info.XMax, info.Unit)
	}
	bars := map[string]int{}
	for _, l := range info.Lanes {
		bars[l.Name] = l.Bars
	}
	for name, want := range map[string]int{"cpu0 main": 1, "gpu0/compute": 1, "gpu0/copy": 0, "gpu0/ce0": 0, "gpu1/compute": 0} {
		if bars[name] != want {
			t.Errorf("%s has %d bars in 5-6 ms, want %d", name, bars[name], want)
		}
	}
	if !reflect.DeepEqual(info.Legend, []plots.Kind{plots.KindKernel, plots.KindWait}) {
		t.Errorf("legend in 5-6 ms = %q, want kernel and host blocked", info.Legend)
	}
	// A window after the end is refused.
	if _, _, err := plots.Timeline(res, plots.TimelineOptions{From: res.Makespan + ms}); err == nil {
		t.Error("a window after the run: no error")
	}
}

func TestTimelineSVGDeterministic(t *testing.T) {
	render := func() []byte {
		res := run(t, twoGPU, fixed)
		p, info, err := plots.Timeline(res, plots.TimelineOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := plots.Write(&b, p, plots.TimelineWidth, info.Height, "svg"); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	a, b := render(), render()
	if !bytes.Equal(a, b) {
		t.Fatal("two renderings of the same run differ")
	}
	// The text a reader sees is in the SVG: title, lanes, legend, unit.
	for _, s := range []string{"fixed on box", "gpu0/ce0", "cpu0->sw0 pcie", "copy H2D", "host blocked", "time (ms)"} {
		if !bytes.Contains(a, []byte(">"+html.EscapeString(s)+"<")) {
			t.Errorf("the SVG has no text %q", s)
		}
	}
	if !bytes.HasPrefix(bytes.TrimSpace(a), []byte("<?xml")) {
		t.Error("not an SVG document")
	}
}

func TestWriteFormats(t *testing.T) {
	res := run(t, twoGPU, fixed)
	p, info, err := plots.Timeline(res, plots.TimelineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	magic := map[string]string{"png": "\x89PNG", "svg": "<?xml", "pdf": "%PDF"}
	for f, m := range magic {
		var b bytes.Buffer
		if err := plots.Write(&b, p, plots.TimelineWidth, info.Height, f); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !bytes.HasPrefix(b.Bytes(), []byte(m)) {
			t.Errorf("%s output starts %q", f, b.Bytes()[:8])
		}
	}
	for name, want := range map[string]string{"a/b.PNG": "png", "x.svg": "svg", "r.pdf": "pdf"} {
		if got, err := plots.FormatOf(name); err != nil || got != want {
			t.Errorf("FormatOf(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
	for _, name := range []string{"plot", "plot.jpg", "png"} {
		if _, err := plots.FormatOf(name); err == nil || !strings.Contains(err.Error(), ".png, .svg or .pdf") {
			t.Errorf("FormatOf(%q): %v, want an error naming the valid extensions", name, err)
		}
	}
}

// TestWriteKeepsLabelsInsideThePicture draws a plot whose longest y label
// is long and checks, in the PNG, that no dark pixel touches the left edge:
// the plotting library starts tick labels at the canvas's edge, and the
// first letter of a lane label such as "nvswitch->gpu1 nvlink" was cut.
func TestWriteKeepsLabelsInsideThePicture(t *testing.T) {
	for _, label := range []string{"nvswitch->gpu1 nvlink", "mmmmmmmmmmmmmmmmmmmmmmmm"} {
		p := plot.New()
		p.NominalY(label, "a")
		var b bytes.Buffer
		if err := plots.Write(&b, p, plots.Pixels(800), plots.Pixels(200), "png"); err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(&b)
		if err != nil {
			t.Fatal(err)
		}
		left := img.Bounds().Max.X
		for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
			for x := img.Bounds().Min.X; x < left; x++ {
				if r, g, bl, a := img.At(x, y).RGBA(); a > 0x8000 && max(r, g, bl) < 0xc000 {
					left = x
				}
			}
		}
		if left < 3 {
			t.Errorf("%q: ink at x = %d; want a margin of 3 pixels or more", label, left)
		}
	}
}

// inkColumns returns the leftmost and rightmost columns of a PNG that hold
// a pixel that is not white: the extent of what was drawn.
func inkColumns(t *testing.T, b []byte) (left, right, width int) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	bd := img.Bounds()
	left, right = bd.Max.X, bd.Min.X-1
	for y := bd.Min.Y; y < bd.Max.Y; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			if r, g, bl, a := img.At(x, y).RGBA(); a > 0x8000 && min(r, g, bl) < 0xf000 {
				left, right = min(left, x), max(right, x)
			}
		}
	}
	return left, right, bd.Dx()
}

// TestWriteKeepsDataInsideThePicture draws what reaches the right edge of
// its data area, a heatmap's last column (gpusim topo plot) and a curve's
// last marker and x tick label (a sweep without a legend), and checks
// that nothing touches either side of the picture.
func TestWriteKeepsDataInsideThePicture(t *testing.T) {
	heat, err := plots.Heatmap("peers", "destination", "source", []string{"gpu0", "gpu1"}, []string{"gpu0", "gpu1"}, [][]float64{{1, 2}, {3, 4}}, nil, "GB/s")
	if err != nil {
		t.Fatal(err)
	}
	curve, err := plots.Lines("sweep", "workers", "makespan (ms)", []plots.Series{{Name: "a", X: []float64{1, 2, 4, 8, 16}, Y: []float64{5, 3, 2, 2, 2}}}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]*plot.Plot{"heatmap": heat, "curve": curve} {
		var b bytes.Buffer
		if err := plots.Write(&b, p, plots.Pixels(600), plots.Pixels(400), "png"); err != nil {
			t.Fatal(err)
		}
		left, right, width := inkColumns(t, b.Bytes())
		if left < 3 || right > width-4 {
			t.Errorf("%s: ink from x = %d to %d in a picture %d wide; want 3 pixels or more free on each side", name, left, right, width)
		}
	}
}

// A hand-built result: gpu0 runs kernels over [0, 50) and [25, 75) ns and a
// copy over [90, 100) ns; gpu1 runs nothing.
func handResult() *sim.Result {
	tp, err := topologies.Load("topo.yaml", []byte(twoGPU))
	if err != nil {
		panic(err)
	}
	ns := sim.Nanosecond
	return &sim.Result{
		Machine:  tp.Machine,
		Program:  &sim.Program{Name: "hand"},
		Makespan: 100 * ns,
		Ops: []sim.OpRecord{
			{Kind: sim.OpKernel, GPU: 0, Start: 0, End: 50 * ns},
			{Kind: sim.OpKernel, GPU: 0, Start: 25 * ns, End: 75 * ns},
			{Kind: sim.OpCopy, GPU: 0, Start: 90 * ns, End: 100 * ns},
		},
	}
}

func TestBusy(t *testing.T) {
	compute, comm := plots.Busy(handResult(), 4)
	// Bins of 25 ns. The kernels' union is [0, 75): the first three bins;
	// the copy fills 10 of the last bin's 25 ns.
	if want := []float64{1, 1, 1, 0}; !reflect.DeepEqual(compute[0], want) {
		t.Errorf("gpu0 compute = %v, want %v", compute[0], want)
	}
	if want := []float64{0, 0, 0, 0.4}; !near(comm[0], want) {
		t.Errorf("gpu0 communication = %v, want %v", comm[0], want)
	}
	if compute[1] != nil || comm[1] != nil {
		t.Errorf("gpu1 ran nothing, got %v %v", compute[1], comm[1])
	}
	// 20 ns bins: 1, 1, 1, 0.75 (60..75), 0.
	c5, _ := plots.Busy(handResult(), 5)
	if want := []float64{1, 1, 1, 0.75, 0}; !near(c5[0], want) {
		t.Errorf("gpu0 compute in 20 ns bins = %v, want %v", c5[0], want)
	}
}

// Over the window [20, 100) ns of the hand result in 4 bins of 20 ns: the
// kernels' union [0, 75) fills the first two and three quarters of the
// third; the copy [90, 100) half the last. Over [80, 100) the kernels lie
// outside: no compute curve.
func TestBusyIn(t *testing.T) {
	ns := sim.Nanosecond
	compute, comm := plots.BusyIn(handResult(), 4, 20*ns, 100*ns)
	if want := []float64{1, 1, 0.75, 0}; !near(compute[0], want) {
		t.Errorf("gpu0 compute = %v, want %v", compute[0], want)
	}
	if want := []float64{0, 0, 0, 0.5}; !near(comm[0], want) {
		t.Errorf("gpu0 communication = %v, want %v", comm[0], want)
	}
	compute, comm = plots.BusyIn(handResult(), 2, 80*ns, 100*ns)
	if compute[0] != nil {
		t.Errorf("gpu0 computes only before 75 ns: %v over [80, 100) ns, want none", compute[0])
	}
	if want := []float64{0, 1}; !near(comm[0], want) {
		t.Errorf("gpu0 communication over [80, 100) = %v, want %v", comm[0], want)
	}
}

func TestLinkLoad(t *testing.T) {
	res := handResult()
	c := 32e9
	// The first link direction carries half its capacity over [0, 30) ns,
	// all of it over [30, 40), then nothing.
	res.Links = []sim.LinkStats{{Link: 0, ResourceStats: sim.ResourceStats{Capacity: c, Used: 1,
		Series: []sim.LoadPoint{{T: 0, Load: c / 2}, {T: 30 * sim.Nanosecond, Load: c}, {T: 40 * sim.Nanosecond, Load: 0}}}}}
	// 20 ns bins: [0,20) 0.5; [20,40): 10 ns at 0.5 and 10 at 1 = 0.75.
	if got, want := plots.LinkLoad(res, 0, 5), []float64{0.5, 0.75, 0, 0, 0}; !near(got, want) {
		t.Errorf("load = %v, want %v", got, want)
	}
	// [25, 45) in 2 bins of 10 ns: 5 ns at 0.5 and 5 at 1 = 0.75; then
	// 5 ns at 1 = 0.5.
	if got, want := plots.LinkLoadIn(res, 0, 2, 25*sim.Nanosecond, 45*sim.Nanosecond), []float64{0.75, 0.5}; !near(got, want) {
		t.Errorf("load over [25, 45) ns = %v, want %v", got, want)
	}
}

func near(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9 {
			return false
		}
	}
	return true
}

// TestUtilizationDashesIdenticalLinks checks that a link whose load stays
// within 1% of capacity of a link drawn before it is dashed, so that it
// does not hide it: a copy from the host to gpu0 loads cpu0->sw0 and
// sw0->gpu0 alike. Two copies of different sizes over a shared link load
// their links differently, and nothing is dashed. Hand-built loads of 0.5
// against 0.504 and 0.55 of capacity are drawn dashed and not.
func TestUtilizationDashesIdenticalLinks(t *testing.T) {
	two := `
name: two
topology: topo.yaml
threads:
  - name: main
    host: cpu0
    ops:
      - copy: {id: c0, from: cpu0, to: gpu0, bytes: 100 MB, memory: pinned, stream: gpu0/copy}
      - copy: {id: c1, from: cpu0, to: gpu1, bytes: 50 MB, memory: pinned, stream: gpu1/copy}
      - sync: {stream: gpu0/copy}
      - sync: {stream: gpu1/copy}
`
	hand := func(second float64) *sim.Result {
		res := handResult()
		c := 32e9
		for i, x := range []float64{0.5, second} {
			res.Links = append(res.Links, sim.LinkStats{Link: i, ResourceStats: sim.ResourceStats{Capacity: c, Used: 1,
				Series: []sim.LoadPoint{{T: 0, Load: x * c}, {T: 60 * sim.Nanosecond, Load: 0}}}})
		}
		return res
	}
	for _, c := range []struct {
		name   string
		res    *sim.Result
		dashed bool
	}{
		{"one copy", run(t, twoGPU, fixed), true},
		{"two copies", run(t, twoGPU, two), false},
		{"0.5 and 0.504", hand(0.504), true},
		{"0.5 and 0.55", hand(0.55), false},
	} {
		ps, err := plots.Utilization(c.res, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := plots.Write(&b, ps[1], plots.TimelineWidth, plots.Pixels(400), "svg"); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(b.String(), "stroke-dasharray"); got != c.dashed {
			t.Errorf("%s: a dashed link line: %v, want %v", c.name, got, c.dashed)
		}
	}
}

func TestUtilizationStructure(t *testing.T) {
	res := run(t, twoGPU, fixed)
	ps, err := plots.Utilization(res, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 {
		t.Fatalf("%d plots, want GPUs and links", len(ps))
	}
	for _, p := range ps {
		if p.X.Min != 0 || math.Abs(p.X.Max-float64(res.Makespan)/1e9) > 1e-9 || p.X.Label.Text != "time (ms)" {
			t.Errorf("%s: x %g..%g %q, want 0..makespan in ms", p.Title.Text, p.X.Min, p.X.Max, p.X.Label.Text)
		}
		if p.Y.Min != 0 || p.Y.Max < 1 {
			t.Errorf("%s: y %g..%g, want 0 to at least 1", p.Title.Text, p.Y.Min, p.Y.Max)
		}
	}
	if !strings.HasPrefix(ps[0].Title.Text, "fixed on box") {
		t.Errorf("title %q", ps[0].Title.Text)
	}
	var b bytes.Buffer
	if err := plots.WriteTiles(&b, ps, plots.TimelineWidth, plots.Pixels(400), "svg"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"gpu0 compute", "gpu0 communication and copies", "gpu1 compute", "sw0-&gt;gpu0 pcie", "load / capacity"} {
		if !strings.Contains(b.String(), ">"+s+"<") {
			t.Errorf("the SVG has no text %q", s)
		}
	}
	if strings.Contains(b.String(), ">gpu1 communication") {
		t.Error("gpu1 moved no data but has a communication curve")
	}
	if strings.Contains(ps[0].Title.Text, "share a curve") {
		t.Errorf("title %q: no two GPUs share a curve", ps[0].Title.Text)
	}
}

// A run whose ops move no bytes over a link says so above its empty links
// panel.
func TestUtilizationSaysNoLinkCarriedBytes(t *testing.T) {
	res := run(t, twoGPU, `
name: compute-only
topology: topo.yaml
threads:
  - name: main
    host: cpu0
    ops:
      - kernel: {stream: gpu0/s, duration: 1 ms}
`)
	ps, err := plots.Utilization(res, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := "compute-only on box: busiest links (none carried any bytes)"; ps[1].Title.Text != want {
		t.Errorf("links panel title %q, want %q", ps[1].Title.Text, want)
	}
}

// Peer paths: gpu0-gpu1 over NVLink; gpu2 shares a switch that does not
// forward P2P, so its copies are staged through the host.
const mixed = `
name: mixed
hosts:
  - {name: cpu0}
gpus:
  - {name: gpu0, model: H100-SXM, host: cpu0}
  - {name: gpu1, model: H100-SXM, host: cpu0}
  - {name: gpu2, model: H100-SXM, host: cpu0}
switches:
  - {name: sw0, kind: pcie, p2p: false}
links:
  - {ends: [gpu0, gpu1], type: nvlink4, count: 2}
  - {ends: [gpu0, sw0], type: pcie5x16}
  - {ends: [gpu1, sw0], type: pcie5x16}
  - {ends: [gpu2, sw0], type: pcie5x16}
  - {ends: [sw0, cpu0], type: pcie5x16}
`

func TestPeerBandwidth(t *testing.T) {
	tp, err := topologies.Load("mixed.yaml", []byte(mixed))
	if err != nil {
		t.Fatal(err)
	}
	bw, kinds, err := plots.PeerBandwidth(tp.Machine)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"", "NV", "HOST"}, {"NV", "", "HOST"}, {"HOST", "HOST", ""}}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("kinds = %q, want %q", kinds, want)
	}
	var nvlink, pcie float64
	for _, l := range tp.Machine.Links {
		switch l.Kind {
		case sim.LinkNVLink:
			nvlink = l.Bandwidth
		case sim.LinkPCIe:
			pcie = l.Bandwidth
		}
	}
	for i := range bw {
		if !math.IsNaN(bw[i][i]) {
			t.Errorf("diagonal %d = %g, want empty", i, bw[i][i])
		}
	}
	// A copy cannot beat the links it crosses; NVLink beats staging.
	if v := bw[0][1]; v <= 0 || v > nvlink/1e9 {
		t.Errorf("gpu0->gpu1 %g GB/s, want in (0, %g]", v, nvlink/1e9)
	}
	if v := bw[0][2]; v <= 0 || v > pcie/1e9 || v >= bw[0][1] {
		t.Errorf("gpu0->gpu2 %g GB/s, want in (0, %g] and below NVLink's %g", v, pcie/1e9, bw[0][1])
	}
	p, err := plots.TopoHeatmap(tp.Machine, "")
	if err != nil {
		t.Fatal(err)
	}
	if p.X.Min != -0.5 || p.X.Max != 2.5 || p.Y.Min != -0.5 || p.Y.Max != 2.5 {
		t.Errorf("axes %g..%g x %g..%g, want a cell per GPU", p.X.Min, p.X.Max, p.Y.Min, p.Y.Max)
	}
	var cols []string
	for _, tk := range p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max) {
		cols = append(cols, tk.Label)
	}
	if !reflect.DeepEqual(cols, []string{"gpu0", "gpu1", "gpu2"}) {
		t.Errorf("columns %q", cols)
	}
	if !strings.Contains(p.Title.Text, "mixed") || !strings.Contains(p.Title.Text, "GB/s") || !strings.Contains(p.Title.Text, "HOST: staged") {
		t.Errorf("title %q should name the machine, the unit and the path kinds", p.Title.Text)
	}
	var b bytes.Buffer
	if err := plots.Write(&b, p, plots.Pixels(700), plots.Pixels(640), "svg"); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), ">NV<"); n != 2 {
		t.Errorf("%d cells marked NV, want 2", n)
	}
}

func TestWriteDOT(t *testing.T) {
	tp, err := topologies.Load("mixed.yaml", []byte(mixed))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := plots.WriteDOT(&b, tp.Machine); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.HasPrefix(out, `graph "mixed" {`) || !strings.HasSuffix(out, "}\n") {
		t.Errorf("not a DOT graph:\n%s", out)
	}
	// One edge per link, one node per host, GPU and switch.
	if n := strings.Count(out, " -- "); n != 5 {
		t.Errorf("%d edges, want 5", n)
	}
	if n := strings.Count(out, "shape="); n != 5 {
		t.Errorf("%d nodes, want 5", n)
	}
	if !strings.Contains(out, `label="gpu0\nH100-SXM"`) {
		t.Errorf("GPU labels should be name and model on two lines:\n%s", out)
	}
	if !strings.Contains(out, `label="sw0\npcie (no P2P)"`) {
		t.Errorf("a switch that does not forward P2P should say so:\n%s", out)
	}
	// Edges say their bandwidth as topo show does: 600 NVLink4 links of
	// 25 GB/s at 0.875 of raw (the preset's 21.875 GB/s each) are 13.12
	// TB/s, not "1.312e+04 GB/s".
	big, err := topologies.Load("big.yaml", []byte("name: big\nhosts: [{name: cpu0}]\ngpus: [{name: gpu0, model: H100-SXM}, {name: gpu1, model: H100-SXM}]\nlinks: [{ends: [gpu0, cpu0], type: pcie5x16}, {ends: [gpu1, cpu0], type: pcie5x16}, {ends: [gpu0, gpu1], type: nvlink4, count: 600}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := plots.WriteDOT(&b, big.Machine); err != nil {
		t.Fatal(err)
	}
	if want := `label="nvlink 13.12 TB/s"`; !strings.Contains(b.String(), want) {
		t.Errorf("no %s in\n%s", want, b.String())
	}
}

func TestSizeTicks(t *testing.T) {
	label := func(ts []plot.Tick) []string {
		var l []string
		for _, t := range ts {
			if t.Label != "" {
				l = append(l, t.Label)
			}
		}
		return l
	}
	// 8 B to 8 GiB spans 2^3..2^33: labels every 2^4 beyond 10 labels.
	got := label(plots.SizeTicks{}.Ticks(8, 8<<30))
	want := []string{"16 B", "256 B", "4 KiB", "64 KiB", "1 MiB", "16 MiB", "256 MiB", "4 GiB"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("labels 8 B..8 GiB = %q, want %q", got, want)
	}
	got = label(plots.SizeTicks{}.Ticks(1<<20, 64<<20))
	want = []string{"1 MiB", "4 MiB", "16 MiB", "64 MiB"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("labels 1..64 MiB = %q, want %q", got, want)
	}
	if s := plots.SizeLabel(1536); s != "1.5 KiB" {
		t.Errorf("SizeLabel(1536) = %q", s)
	}
}

func TestLinesAndHeatmap(t *testing.T) {
	p, err := plots.Lines("t", "gpus", "makespan (ms)", []plots.Series{
		{Name: "a", X: []float64{1, 2, 4}, Y: []float64{3, 2, math.NaN()}},
		{Name: "b", X: []float64{1, 2, 4}, Y: []float64{5, 4, 3}},
	}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	// y from 0 to the highest point, 5, and 4% of that above it (5.2),
	// so that the marker of the highest point stays inside the frame; x
	// 3% of its range beyond the first and the last point (1 and 4), so
	// that their markers and tick labels do too.
	if p.Y.Min != 0 || math.Abs(p.Y.Max-5.2) > 1e-12 || math.Abs(p.X.Min-0.91) > 1e-12 || math.Abs(p.X.Max-4.09) > 1e-12 {
		t.Errorf("axes x %g..%g y %g..%g, want x 0.91..4.09, y from 0 to 5.2", p.X.Min, p.X.Max, p.Y.Min, p.Y.Max)
	}
	for _, tk := range p.Y.Tick.Marker.Ticks(0, 5) {
		if strings.Contains(tk.Label, ".0") {
			t.Errorf("tick label %q has needless zeros", tk.Label)
		}
	}
	cat, err := plots.Lines("t", "bucket", "ms", []plots.Series{{Name: "a", X: []float64{0, 1}, Y: []float64{1, 2}}}, false, []string{"25 MiB", "200 MiB"})
	if err != nil {
		t.Fatal(err)
	}
	if cat.X.Min != -0.5 || cat.X.Max != 1.5 {
		t.Errorf("categorical x %g..%g, want -0.5..1.5", cat.X.Min, cat.X.Max)
	}
	h, err := plots.Heatmap("m", "col", "row", []string{"r0"}, []string{"c0", "c1"}, [][]float64{{1, math.NaN()}}, nil, "GB/s")
	if err != nil {
		t.Fatal(err)
	}
	if h.Title.Text != "m (GB/s)" {
		t.Errorf("heatmap title %q", h.Title.Text)
	}
	if _, err := plots.Heatmap("m", "", "", nil, nil, nil, nil, ""); err == nil {
		t.Error("an empty matrix: no error")
	}
}

func TestNiceTicks(t *testing.T) {
	labels := func(lo, hi float64) []string {
		var l []string
		for _, tk := range (plots.NiceTicks{N: 10}).Ticks(lo, hi) {
			if tk.Label != "" {
				l = append(l, tk.Label)
			}
		}
		return l
	}
	// 0..338 in about 10 steps: 338/10 = 33.8, rounded up to 50.
	if got, want := labels(0, 338), []string{"0", "50", "100", "150", "200", "250", "300"}; !reflect.DeepEqual(got, want) {
		t.Errorf("0..338: %q, want %q", got, want)
	}
	// 88..92: 0.4 rounds up to 0.5.
	if got, want := labels(88, 92), []string{"88", "88.5", "89", "89.5", "90", "90.5", "91", "91.5", "92"}; !reflect.DeepEqual(got, want) {
		t.Errorf("88..92: %q, want %q", got, want)
	}
	// 0..1.5: 0.15 rounds up to 0.2; labels print as written.
	if got, want := labels(0, 1.5), []string{"0", "0.2", "0.4", "0.6", "0.8", "1", "1.2", "1.4"}; !reflect.DeepEqual(got, want) {
		t.Errorf("0..1.5: %q, want %q", got, want)
	}
	// From 10,000 up, a suffix as the tables print: 0..4e7 in steps of
	// 5e6 reads 5M, 10M ...; 3.8e7..4.2e7 in steps of 5e5, 38.5M.
	if got, want := labels(0, 4e7), []string{"0", "5M", "10M", "15M", "20M", "25M", "30M", "35M", "40M"}; !reflect.DeepEqual(got, want) {
		t.Errorf("0..4e7: %q, want %q", got, want)
	}
	if got, want := labels(3.8e7, 4.2e7), []string{"38M", "38.5M", "39M", "39.5M", "40M", "40.5M", "41M", "41.5M", "42M"}; !reflect.DeepEqual(got, want) {
		t.Errorf("3.8e7..4.2e7: %q, want %q", got, want)
	}
	if got, want := labels(0, 12000), []string{"0", "2k", "4k", "6k", "8k", "10k", "12k"}; !reflect.DeepEqual(got, want) {
		t.Errorf("0..12000: %q, want %q", got, want)
	}
	// Under 10,000, as written.
	if got, want := labels(0, 9000), []string{"0", "1000", "2000", "3000", "4000", "5000", "6000", "7000", "8000", "9000"}; !reflect.DeepEqual(got, want) {
		t.Errorf("0..9000: %q, want %q", got, want)
	}
}

func TestTimelineLaneCap(t *testing.T) {
	// MaxLanes+50 threads, each with 1 us of host work.
	var b strings.Builder
	b.WriteString("name: wide\ntopology: topo.yaml\nthreads:\n")
	n := plots.MaxLanes + 50
	for i := 0; i < n; i++ {
		b.WriteString("  - {name: t" + strconv.Itoa(i) + ", host: cpu0, ops: [{host: {duration: 1 us}}]}\n")
	}
	res := run(t, twoGPU, b.String())
	p, info, err := plots.Timeline(res, plots.TimelineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Lanes) != plots.MaxLanes || info.Dropped != 50 {
		t.Errorf("%d lanes, %d dropped; want %d and 50", len(info.Lanes), info.Dropped, plots.MaxLanes)
	}
	if want := fmt.Sprintf("wide on box (first %d of %d lanes)", plots.MaxLanes, n); p.Title.Text != want {
		t.Errorf("title %q, want %q", p.Title.Text, want)
	}
}

func TestNiceTicksFarIntoARun(t *testing.T) {
	// A 4 us window 50 s into a run, in seconds: labels must differ.
	var labels []string
	for _, tk := range (plots.NiceTicks{N: 4}).Ticks(50.000001, 50.000005) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if want := []string{"50.000001", "50.000002", "50.000003", "50.000004", "50.000005"}; !reflect.DeepEqual(labels, want) {
		t.Errorf("labels %q, want %q", labels, want)
	}
}

func TestLinesSortsAndBreaks(t *testing.T) {
	// Unsorted x and a failed point: the plot's x range covers the points,
	// and a log axis over one size does not panic when drawn.
	p, err := plots.Lines("t", "x", "y", []plots.Series{{Name: "a", X: []float64{4, 1, 8, 2}, Y: []float64{1, 2, math.NaN(), 3}}}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := plots.Write(&b, p, plots.Pixels(400), plots.Pixels(300), "svg"); err != nil {
		t.Fatal(err)
	}
	for _, one := range [][]float64{{1}, {0}, {}} {
		y := make([]float64, len(one))
		p, err := plots.Lines("t", "size", "GB/s", []plots.Series{{Name: "a", X: one, Y: y}}, true, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !(p.X.Min > 0 && p.X.Max > p.X.Min) {
			t.Errorf("log x over %v: range %g..%g, want positive and wider than a point", one, p.X.Min, p.X.Max)
		}
		if err := plots.Write(&b, p, plots.Pixels(400), plots.Pixels(300), "png"); err != nil {
			t.Errorf("log x over %v: %v", one, err)
		}
	}
}

// An await has no API call: the thread is blocked from its call until it
// takes from the semaphore, 10 us here (the producer's host work), and the
// timeline draws that as blocked, not as CPU time in an API call.
func TestTimelineDrawsAnAwaitAsBlocked(t *testing.T) {
	res := run(t, twoGPU, `
name: sem
topology: topo.yaml
threads:
  - name: producer
    host: cpu0
    ops: [{host: {id: p, duration: 10 us}}, {signal: {id: s, semaphore: ready}}]
  - name: consumer
    host: cpu0
    ops: [{await: {id: a, semaphore: ready}}, {host: {id: c, duration: 5 us}}]
`)
	_, info, err := plots.Timeline(res, plots.TimelineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []plots.Kind{plots.KindHost, plots.KindWait}; !reflect.DeepEqual(info.Legend, want) {
		t.Errorf("legend = %q, want %q: the await is time blocked, and nothing calls the API", info.Legend, want)
	}
	if want := []string{"cpu0 producer", "cpu0 consumer"}; !reflect.DeepEqual(laneNames(info), want) {
		t.Fatalf("lanes = %q, want %q", laneNames(info), want)
	}
	// The consumer: blocked 0-10 us, then its host work 10-15 us.
	if b := info.Lanes[1].Bars; b != 2 {
		t.Errorf("the consumer's lane has %d bars, want 2 (blocked, then host work)", b)
	}
}

// A pageable copy's call lasts while the thread stages the data: drawn as
// the API call it is (the summary counts its memcpys as CPU time), not as
// time blocked.
func TestTimelineDrawsPageableStagingAsTheCall(t *testing.T) {
	res := run(t, twoGPU, `
name: staging
topology: topo.yaml
threads:
  - name: main
    host: cpu0
    ops: [{copy: {id: c, from: cpu0, to: gpu0, bytes: 64 MiB, memory: pageable, stream: gpu0/copy}}]
`)
	_, info, err := plots.Timeline(res, plots.TimelineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []plots.Kind{plots.KindH2D, plots.KindAPI, plots.KindTransfer}; !reflect.DeepEqual(info.Legend, want) {
		t.Errorf("legend = %q, want %q: the thread is in the call while it stages", info.Legend, want)
	}
}

// A sweep whose values span two decades or more goes on a log y axis;
// a narrower one, or one with a zero, stays linear.
func TestLogYWhereValuesSpanDecades(t *testing.T) {
	for _, tc := range []struct {
		y    []float64
		want bool
	}{
		{[]float64{0.5, 5, 50}, true},
		{[]float64{1, math.NaN(), 99.9}, false},
		{[]float64{1, 10, 1000}, true},
		{[]float64{0, 10, 1000}, false},
		{[]float64{math.NaN(), 2, 200}, true},
	} {
		s := []plots.Series{{Name: "a", X: []float64{1, 2, 3}, Y: tc.y}}
		p, err := plots.Lines("t", "x", "y", s, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := plots.LogY(p, s, 100); got != tc.want {
			t.Errorf("LogY(%v) = %v, want %v", tc.y, got, tc.want)
		}
		if _, isLog := p.Y.Scale.(plot.LogScale); isLog != tc.want {
			t.Errorf("%v: log scale %v, want %v", tc.y, isLog, tc.want)
		}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, y := range tc.y {
			if !math.IsNaN(y) {
				lo, hi = math.Min(lo, y), math.Max(hi, y)
			}
		}
		if tc.want && !(p.Y.Min > 0 && p.Y.Min < lo && p.Y.Max > hi) {
			t.Errorf("%v: y range %g-%g does not hold the points with room", tc.y, p.Y.Min, p.Y.Max)
		}
	}
}

// Three links with the same load: the second and third are dashed, each
// drawing one stretch in three at its own phase, so that all three colors
// show (two dashes of one in two, in phase and out of it, would cover the
// first completely).
func TestUtilizationDashesThreeIdenticalLinksApart(t *testing.T) {
	res := handResult()
	c := 32e9
	for i := 0; i < 3; i++ {
		res.Links = append(res.Links, sim.LinkStats{Link: i, ResourceStats: sim.ResourceStats{Capacity: c, Used: 1,
			Series: []sim.LoadPoint{{T: 0, Load: 0.5 * c}, {T: 60 * sim.Nanosecond, Load: 0}}}})
	}
	ps, err := plots.Utilization(res, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := plots.Write(&b, ps[1], plots.TimelineWidth, plots.Pixels(400), "svg"); err != nil {
		t.Fatal(err)
	}
	// The curves' styles, then the legend's (an offset of 0 is not written).
	dashes := regexp.MustCompile(`stroke-dasharray:([^;"]*)(;stroke-dashoffset:([^;"]*))?`).FindAllStringSubmatch(b.String(), -1)
	var got []string
	for _, d := range dashes {
		off := d[3]
		if off == "" {
			off = "0"
		}
		got = append(got, d[1]+" at "+off)
	}
	if len(got) > 2 {
		got = got[:2]
	}
	// 6 points on, 12 off (the SVG counts in points).
	if want := []string{"6,12 at 0", "6,12 at 6"}; !reflect.DeepEqual(got, want) {
		t.Errorf("dashes %q, want %q", got, want)
	}
}

// TestTimeAxesOfAFiveMillisecondRun: the timeline and both utilization
// plots of a run of about 5 ms count milliseconds (0 to 5), not 0 to 5000
// us.
func TestTimeAxesOfAFiveMillisecondRun(t *testing.T) {
	res := run(t, twoGPU, `
name: five
topology: topo.yaml
threads:
  - name: main
    host: cpu0
    ops:
      - kernel: {id: k, stream: gpu0/compute, duration: 5 ms}
      - sync: {stream: gpu0/compute}
`)
	_, info, err := plots.Timeline(res, plots.TimelineOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Unit != "ms" || info.XMax < 5 || info.XMax > 6 {
		t.Errorf("timeline axis 0..%g %s, want 0..5 ms", info.XMax, info.Unit)
	}
	ps, err := plots.Utilization(res, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.X.Label.Text != "time (ms)" || p.X.Max < 5 || p.X.Max > 6 {
			t.Errorf("%s: x 0..%g %q, want 0..5 in ms", p.Title.Text, p.X.Max, p.X.Label.Text)
		}
	}
}

// TestUtilizationDrawsIdenticalGPUsOnce: eight GPUs that compute alike
// get one curve named for all of them, not eight drawn over each other
// under eight legend entries; a GPU that differs keeps its own.
func TestUtilizationDrawsIdenticalGPUsOnce(t *testing.T) {
	scen := func(slow int) string {
		s := "name: alike\ntopology: topo.yaml\nthreads:\n"
		for g := 0; g < 8; g++ {
			d := "1 ms"
			if g == slow {
				d = "2 ms"
			}
			s += fmt.Sprintf("  - {name: t%d, host: cpu0, ops: [{kernel: {stream: gpu%d/s, duration: %s}}, {sync: {stream: gpu%d/s}}]}\n", g, g, d, g)
		}
		return s
	}
	for _, c := range []struct {
		slow      int
		want, not []string
	}{
		{-1, []string{"gpu0-gpu7 compute"}, []string{"gpu0 compute", "gpu7 compute"}},
		{3, []string{"gpu0-gpu2, gpu4-gpu7 compute", "gpu3 compute"}, []string{"gpu0 compute", "gpu0-gpu7 compute"}},
		{7, []string{"gpu0-gpu6 compute", "gpu7 compute"}, []string{"gpu0 compute"}},
	} {
		ps, err := plots.Utilization(run(t, eightGPU(), scen(c.slow)), "", 0)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := plots.WriteTiles(&b, ps, plots.TimelineWidth, plots.Pixels(400), "svg"); err != nil {
			t.Fatal(err)
		}
		for _, s := range c.want {
			if !strings.Contains(b.String(), ">"+s+"<") {
				t.Errorf("slow GPU %d: no legend entry %q", c.slow, s)
			}
		}
		for _, s := range c.not {
			if strings.Contains(b.String(), ">"+s+"<") {
				t.Errorf("slow GPU %d: a legend entry %q", c.slow, s)
			}
		}
		if !strings.Contains(ps[0].Title.Text, "share a curve") {
			t.Errorf("slow GPU %d: title %q does not say that GPUs busy alike share a curve", c.slow, ps[0].Title.Text)
		}
	}
}

// A link panel whose loads stay under a quarter of capacity is drawn to
// 1.1 times their peak, and its label says the peak; at a quarter or more
// it keeps the 0-1.05 axis. The hand result's link carries x of its
// capacity over [0, 60) of 100 ns.
func TestUtilizationLinkAxisFollowsSmallLoads(t *testing.T) {
	for _, c := range []struct {
		x, max float64
		label  string
	}{
		{0.02, 1.1 * 0.02, "load / capacity (at most 2%)"},
		{0.5, 1.05, "load / capacity"},
	} {
		res := handResult()
		res.Links = []sim.LinkStats{{Link: 0, ResourceStats: sim.ResourceStats{Capacity: 32e9, Used: 1,
			Series: []sim.LoadPoint{{T: 0, Load: c.x * 32e9}, {T: 60 * sim.Nanosecond, Load: 0}}}}}
		ps, err := plots.Utilization(res, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		if lp := ps[1]; math.Abs(lp.Y.Max-c.max) > 1e-9 || lp.Y.Label.Text != c.label {
			t.Errorf("load %g: axis to %g, label %q; want %g, %q", c.x, lp.Y.Max, lp.Y.Label.Text, c.max, c.label)
		}
	}
}

// Ops that only touch a window's edges (kernels ending at its start, a copy
// starting at its end) are outside it: no curve. A window far into a run
// keeps the timeline's unit: 100 to 100.01 ms in ms, not us.
func TestUtilizationWindowEdgesAndUnit(t *testing.T) {
	ns := sim.Nanosecond
	compute, comm := plots.BusyIn(handResult(), 3, 75*ns, 90*ns)
	if compute[0] != nil || comm[0] != nil {
		t.Errorf("over [75, 90) ns: compute %v, communication %v; want neither", compute[0], comm[0])
	}
	res := handResult()
	res.Makespan = 200 * sim.Millisecond
	res.Ops[2].Start, res.Ops[2].End = 100*sim.Millisecond, 100*sim.Millisecond+10*sim.Microsecond
	ps, err := plots.UtilizationIn(res, "", 0, 100*sim.Millisecond, 100*sim.Millisecond+10*sim.Microsecond)
	if err != nil {
		t.Fatal(err)
	}
	if got := ps[0].X.Label.Text; got != "time (ms)" {
		t.Errorf("axis %q, want time (ms)", got)
	}
	if got := ps[1].Title.Text; !strings.HasSuffix(got, "(none carried any bytes in this window)") {
		t.Errorf("link panel %q, want it to say no link carried bytes in the window", got)
	}
}

// Ten GPUs in nine groups busy differently are too many curves to tell apart: each
// is drawn grey without a legend entry, and their mean in colour, named.
// (Eight are drawn one by one: an 8-GPU pipeline's stages each differ.)
func TestUtilizationOfManyGPUsIsTheirMean(t *testing.T) {
	src, _ := topologies.ShippedSource("gb200-nvl72")
	s := "name: many\ntopology: topo.yaml\nthreads:\n"
	// Nine durations over ten GPUs: gpu9 is busy as gpu8, so there are
	// nine groups (curves) of ten GPUs.
	for g := 0; g < 10; g++ {
		s += fmt.Sprintf("  - {name: t%d, host: grace%d, ops: [{kernel: {stream: gpu%d/s, duration: %d ms}}, {sync: {stream: gpu%d/s}}]}\n", g, g/2, g, min(g, 8)+1, g)
	}
	ps, err := plots.Utilization(run(t, string(src), s), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := plots.WriteTiles(&b, ps, plots.TimelineWidth, plots.Pixels(400), "svg"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), ">mean of 10 GPUs: compute<") {
		t.Error("no legend entry for the mean")
	}
	for g := 0; g < 10; g++ {
		if strings.Contains(b.String(), fmt.Sprintf(">gpu%d compute<", g)) {
			t.Errorf("a legend entry for gpu%d", g)
		}
	}
	if !strings.Contains(ps[0].Title.Text, "each of 10 GPUs in grey, their mean in colour") {
		t.Errorf("title %q does not say how it is drawn", ps[0].Title.Text)
	}
}

// An SVG is white all over, margins and legend strip included: left
// transparent, its black legend text vanished on a dark slide.
func TestSVGIsWhiteAllOver(t *testing.T) {
	ps, err := plots.Utilization(run(t, eightGPU(), "name: one\ntopology: topo.yaml\nthreads:\n  - {name: t, host: cpu0, ops: [{kernel: {stream: gpu0/s, duration: 1 ms}}]}\n"), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := plots.WriteTiles(&b, ps, plots.Pixels(800), plots.Pixels(300), "svg"); err != nil {
		t.Fatal(err)
	}
	// 800 x 600 pixels at 96 dpi are 600 x 450 points.
	if !strings.Contains(b.String(), `<path d="M0,0L600,0L600,450L0,450Z" style="fill:#FFFFFF" />`) {
		t.Errorf("no white rectangle over the whole 600 x 450 pt picture:\n%.600s", b.String())
	}
}

// A log y axis with a long label fills the picture's height as a linear
// one does: the plotting library reserved room for the label at the
// linear midpoint of the log axis, near its top, and left the top third
// of the picture blank. The y axis line (the longest dark column run near
// the left edge) must start within 60 pixels of the top.
func TestLogYAxisFillsThePicture(t *testing.T) {
	s := []plots.Series{{Name: "a", X: []float64{1, 2, 4, 8, 16}, Y: []float64{20, 10, 1, 0.1, 0.02}}}
	p, err := plots.Lines("t", "n", "mean idle of the GPUs in use (% of the makespan), log scale", s, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !plots.LogY(p, s, 100) {
		t.Fatal("not on a log axis")
	}
	var b bytes.Buffer
	if err := plots.Write(&b, p, plots.Pixels(800), plots.Pixels(600), "png"); err != nil {
		t.Fatal(err)
	}
	im, err := png.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	bestLen, bestTop := 0, 0
	for x := 0; x < 150; x++ {
		run, top := 0, 0
		for y := im.Bounds().Min.Y; y < im.Bounds().Max.Y; y++ {
			r, g, bl, _ := im.At(x, y).RGBA()
			if r+g+bl < 3*0xC000 {
				if run == 0 {
					top = y
				}
				run++
				if run > bestLen {
					bestLen, bestTop = run, top
				}
			} else {
				run = 0
			}
		}
	}
	if bestLen < 300 || bestTop > 60 {
		t.Errorf("the y axis runs %d pixels from y = %d; want 300 or more from within 60 of the top", bestLen, bestTop)
	}
}

// A window's link lanes are the links busiest in it, not in the run: 1 GiB
// to gpu0 first (the run's busiest, cpu0->sw0 and sw0->gpu0), then, after
// a 100 ms kernel, 1 MiB from gpu1 to the host; the window around the
// second copy draws gpu1->sw0's lane, not the first copy's idle ones.
func TestTimelineWindowDrawsItsBusiestLinks(t *testing.T) {
	res := run(t, twoGPU, `
name: win
topology: topo.yaml
threads:
  - name: main
    host: cpu0
    ops:
      - copy: {from: cpu0, to: gpu0, bytes: 1 GiB, stream: gpu0/s}
      - kernel: {stream: gpu1/s, duration: 100 ms}
      - copy: {from: gpu1, to: cpu0, bytes: 1 MiB, stream: gpu1/s}
`)
	_, info, err := plots.Timeline(res, plots.TimelineOptions{From: res.Makespan - sim.Millisecond, Links: 1})
	if err != nil {
		t.Fatal(err)
	}
	var links []string
	for _, l := range info.Lanes {
		if l.Group == "links" {
			links = append(links, l.Name)
		}
	}
	if len(links) != 1 || !strings.Contains(links[0], "gpu1->sw0") {
		t.Errorf("the window's link lanes %q, want gpu1->sw0's", links)
	}
}

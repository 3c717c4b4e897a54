package mirror

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"gpusim/sim"
)

// Reference is one published measurement of a real machine that a shipped
// topology claims to reproduce, with how to predict it.
type Reference struct {
	// Topology is the shipped topology that models the machine.
	Topology string
	// Tool and What say what was measured: the tool, its test and the case.
	Tool, What string
	// Measured is the published figure, in Unit.
	Measured float64
	Unit     string
	// Bytes is the message or buffer size; figures at 64 MiB and more are
	// "large" and count towards the median error the report states.
	Bytes int64
	// Source says where the figure is published (a section of
	// shared/groundtruth/measured.md and its own source).
	Source string
	// Bound is the largest relative error accepted; the test fails past it.
	Bound float64
	// Note explains a known deviation.
	Note string
	// Fitted names the model parameter this figure was used to fit, if any:
	// agreement there is by construction.
	Fitted string
	// predict computes gpusim's figure.
	predict func(*cache) (float64, error)
}

// LargeBytes is the size from which a figure counts as large.
const LargeBytes = 64 << 20

// Large reports whether the figure is a large-message one.
func (r Reference) Large() bool { return r.Bytes >= LargeBytes }

// cache keeps matrices and tables already computed for the report.
type cache struct {
	nvb  map[string][]*Matrix
	p2p  map[string][]*Matrix
	nccl map[string][]NCCLRow
	each Each
}

func (c *cache) nvbandwidth(topo, test string, buffer int64) (*Matrix, error) {
	key := fmt.Sprintf("%s %s %d", topo, test, buffer)
	if ms, ok := c.nvb[key]; ok {
		return ms[0], nil
	}
	t, err := topology(topo)
	if err != nil {
		return nil, err
	}
	ms, err := NVBandwidth(t.Machine, test, buffer, c.each)
	if err != nil {
		return nil, err
	}
	c.nvb[key] = ms
	return ms[0], nil
}

func (c *cache) p2pTest(topo, name string) (*Matrix, error) {
	ms, ok := c.p2p[topo]
	if !ok {
		t, err := topology(topo)
		if err != nil {
			return nil, err
		}
		if ms, err = P2PTest(t.Machine, c.each); err != nil {
			return nil, err
		}
		c.p2p[topo] = ms
	}
	for _, m := range ms {
		if m.Name == name {
			return m, nil
		}
	}
	return nil, fmt.Errorf("no p2p matrix %s", name)
}

func (c *cache) ncclRow(topo string, cfg NCCLTestsConfig, size int64) (NCCLRow, error) {
	key := fmt.Sprintf("%s %s %d %d", topo, cfg.Op, cfg.GPUs, cfg.Procs)
	rows, ok := c.nccl[key]
	if !ok {
		t, err := topology(topo)
		if err != nil {
			return NCCLRow{}, err
		}
		cfg.MinBytes, cfg.MaxBytes, cfg.Factor = 8, 16<<30, 2
		if rows, err = NCCLTests(t, cfg); err != nil {
			return NCCLRow{}, err
		}
		c.nccl[key] = rows
	}
	for _, r := range rows {
		if r.Size == size {
			return r, nil
		}
	}
	return NCCLRow{}, fmt.Errorf("no nccl-tests row of %d bytes", size)
}

// offDiagonalMedian is the median of a square matrix's cells off its diagonal.
func offDiagonalMedian(m *Matrix) float64 {
	var v []float64
	for i, row := range m.Cells {
		for j, x := range row {
			if i != j && x != nil {
				v = append(v, *x)
			}
		}
	}
	return median(v)
}

func diagonalMedian(m *Matrix) float64 {
	var v []float64
	for i, row := range m.Cells {
		if x := row[i]; x != nil {
			v = append(v, *x)
		}
	}
	return median(v)
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func nvbRow(topo, test string, buffer int64) func(*cache) (float64, error) {
	return func(c *cache) (float64, error) {
		m, err := c.nvbandwidth(topo, test, buffer)
		if err != nil {
			return 0, err
		}
		if len(m.Rows) == 1 {
			return median(m.Values()), nil
		}
		return offDiagonalMedian(m), nil
	}
}

func p2pOff(topo, name string) func(*cache) (float64, error) {
	return func(c *cache) (float64, error) {
		m, err := c.p2pTest(topo, name)
		if err != nil {
			return 0, err
		}
		return offDiagonalMedian(m), nil
	}
}

// p2pRow0 is the median of row 0 off the diagonal, for a source that
// published only the first row.
func p2pRow0(topo, name string) func(*cache) (float64, error) {
	return func(c *cache) (float64, error) {
		m, err := c.p2pTest(topo, name)
		if err != nil {
			return 0, err
		}
		var v []float64
		for j, x := range m.Cells[0] {
			if j != 0 && x != nil {
				v = append(v, *x)
			}
		}
		return median(v), nil
	}
}

func p2pDiag(topo, name string) func(*cache) (float64, error) {
	return func(c *cache) (float64, error) {
		m, err := c.p2pTest(topo, name)
		if err != nil {
			return 0, err
		}
		return diagonalMedian(m), nil
	}
}

func ncclBus(topo, op string, gpus int, size int64) func(*cache) (float64, error) {
	return ncclBusProcs(topo, op, gpus, 1, size)
}

// ncclBusProcs is nccl-tests' bus bandwidth under mpirun -np procs.
func ncclBusProcs(topo, op string, gpus, procs int, size int64) func(*cache) (float64, error) {
	return func(c *cache) (float64, error) {
		r, err := c.ncclRow(topo, NCCLTestsConfig{Op: op, GPUs: gpus, Procs: procs}, size)
		return r.BusBW, err
	}
}

func ncclTimeUS(topo, op string, gpus int, size int64) func(*cache) (float64, error) {
	return ncclTimeUSProcs(topo, op, gpus, 1, size)
}

// ncclTimeUSProcs is nccl-tests' time under mpirun -np procs.
func ncclTimeUSProcs(topo, op string, gpus, procs int, size int64) func(*cache) (float64, error) {
	return func(c *cache) (float64, error) {
		r, err := c.ncclRow(topo, NCCLTestsConfig{Op: op, GPUs: gpus, Procs: procs}, size)
		return r.Time.Seconds() * 1e6, err
	}
}

// Report computes every reference's prediction and error.
type Report struct {
	Rows []ReportRow
	// Predictions are the figures awaiting a measurement.
	Predictions []PredictionRow
}

// PredictionRow is a figure gpusim predicts for a machine no measurement
// here covers yet.
type PredictionRow struct {
	Prediction
	Predicted float64
}

// ReportRow is one line of the accuracy report.
type ReportRow struct {
	Reference
	Predicted float64
	// Error is (predicted - measured) / measured.
	Error float64
}

// Accuracy predicts every reference figure, the tools' cells through each
// (nil: one after another).
func Accuracy(each Each) (*Report, error) {
	c := &cache{nvb: map[string][]*Matrix{}, p2p: map[string][]*Matrix{}, nccl: map[string][]NCCLRow{}, each: each}
	rep := &Report{}
	for _, ref := range References {
		v, err := ref.predict(c)
		if err != nil {
			return nil, fmt.Errorf("%s %s %s: %v", ref.Topology, ref.Tool, ref.What, err)
		}
		rep.Rows = append(rep.Rows, ReportRow{Reference: ref, Predicted: v, Error: (v - ref.Measured) / ref.Measured})
	}
	for _, p := range Predictions {
		v, err := p.predict(c)
		if err != nil {
			return nil, fmt.Errorf("%s %s %s: %v", p.Topology, p.Tool, p.What, err)
		}
		rep.Predictions = append(rep.Predictions, PredictionRow{Prediction: p, Predicted: v})
	}
	return rep, nil
}

// LargeMedianError is the median absolute relative error over the
// large-message figures.
func (r *Report) LargeMedianError() float64 { return r.median(false) }

// median is the median absolute error over the large-message figures, all
// of them or only those not used to fit a parameter.
func (r *Report) median(unfittedOnly bool) float64 {
	var v []float64
	for _, row := range r.Rows {
		if row.Large() && (!unfittedOnly || row.Fitted == "") {
			v = append(v, math.Abs(row.Error))
		}
	}
	return median(v)
}

// MedianErrorBound is what the report promises for LargeMedianError.
const MedianErrorBound = 0.10

// WriteMarkdown writes the report as docs/accuracy.md.
func (r *Report) WriteMarkdown(w io.Writer) {
	fmt.Fprintln(w, "# Accuracy: predictions against published measurements")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Generated by `go run ./cmd/gpusim accuracy > docs/accuracy.md`; `go test ./mirror` fails when this")
	fmt.Fprintln(w, "file is stale, when any error grows past its row's bound, or when the median over large messages")
	fmt.Fprintf(w, "passes %.0f%%. Measurements are from `../shared/groundtruth/measured.md`, the team's shared folder\n", MedianErrorBound*100)
	fmt.Fprintln(w, "beside this repository (section given per row, with its public source there); matrix figures")
	fmt.Fprintln(w, "compare medians over the off-diagonal cells. Each tool is mirrored with its own method (sizes,")
	fmt.Fprintln(w, "repeats, what is timed): see `mirror/`. Figures that are not compared are listed at the end, each")
	fmt.Fprintln(w, "with the reason.")
	fmt.Fprintln(w)
	fmt.Fprintf(w, "**Median absolute error over the %d large-message figures (>= 64 MiB): %.1f%%** (bound: %.0f%%).\n",
		r.countLarge(), 100*r.LargeMedianError(), 100*MedianErrorBound)
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Some figures were used to fit a parameter (column \"fitted\": a link generation's efficiency, the\n")
	fmt.Fprintf(w, "staging handoff and setup, NVLS's efficiency); agreement there is by construction, but for the\n")
	fmt.Fprintf(w, "staging setup, fitted to the difference of two figures. Over the large-message figures not used\n")
	fmt.Fprintf(w, "for fitting, the median absolute error is %.1f%%.\n", 100*r.median(true))
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| topology | tool | what | size | measured | gpusim | error | bound | fitted | source |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, row := range r.Rows {
		fit := row.Fitted
		if fit == "" {
			fit = "-"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s %s | %s | %+.1f%% | %.0f%% | %s | %s |\n", row.Topology, row.Tool, row.What, sizeText(row.Bytes),
			trim(row.Measured), row.Unit, trim(row.Predicted), 100*row.Error, 100*row.Bound, fit, row.Source)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "## Known deviations")
	fmt.Fprintln(w)
	for _, row := range r.Rows {
		if row.Note != "" {
			fmt.Fprintf(w, "- **%s %s %s** (%+.1f%%): %s\n", row.Topology, row.Tool, row.What, 100*row.Error, row.Note)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "## Predictions awaiting a measurement")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "What gpusim predicts, with the same mirrors, for shipped topologies that no figure of")
	fmt.Fprintln(w, "`measured.md` covers yet (their numbers come from datasheets and from H100's fits, as their files")
	fmt.Fprintln(w, "say), written down before anyone measures them:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| topology | tool | what | size | gpusim | how |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, p := range r.Predictions {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s %s | %s |\n", p.Topology, p.Tool, p.What, sizeText(p.Bytes), trim(p.Predicted), p.Unit, p.How)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "## Not compared")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Figures of `measured.md` on machines the shipped topologies model that the table leaves out, and why:")
	fmt.Fprintln(w)
	for _, o := range NotCompared {
		fmt.Fprintf(w, "- **%s** (%s): %s\n", o.Figure, o.Source, o.Reason)
	}
}

func (r *Report) countLarge() int {
	n := 0
	for _, row := range r.Rows {
		if row.Large() {
			n++
		}
	}
	return n
}

func trim(v float64) string {
	switch {
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.1f", v)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

func sizeText(b int64) string {
	switch {
	case b >= 1<<30 && b%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", b>>30)
	case b >= 1<<20 && b%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", b>>20)
	case b >= 1e6 && b%1e6 == 0:
		return fmt.Sprintf("%d MB", b/1e6)
	case b >= 1<<10 && b%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", b>>10)
	}
	return fmt.Sprintf("%d B", b)
}

// CheckBounds returns the rows whose error exceeds their bound.
func (r *Report) CheckBounds() []string {
	var out []string
	for _, row := range r.Rows {
		if math.Abs(row.Error) > row.Bound || math.IsNaN(row.Error) {
			out = append(out, fmt.Sprintf("%s %s %s: error %+.1f%% exceeds its bound %.0f%%", row.Topology, row.Tool, strings.TrimSpace(row.What), 100*row.Error, 100*row.Bound))
		}
	}
	return out
}

var _ = sim.Second

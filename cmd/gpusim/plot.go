package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"codeberg.org/go-pdf/fpdf"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"gpusim/internal/units"
	"gpusim/mirror"
	"gpusim/plots"
	"gpusim/sim"
	"gpusim/topologies"
)

// pdfDate is the creation and modification date every PDF gpusim draws
// carries, so that the same input draws the same bytes:
// SOURCE_DATE_EPOCH (seconds, the reproducible-builds convention) where it
// is set, else 1 January 2000. The PDF library would stamp the time of
// drawing.
func pdfDate(epoch string) time.Time {
	if s, err := strconv.ParseInt(epoch, 10, 64); err == nil && s > 0 && s < 1<<40 {
		return time.Unix(s, 0).UTC()
	}
	return time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
}

func init() {
	d := pdfDate(os.Getenv("SOURCE_DATE_EPOCH"))
	fpdf.SetDefaultCreationDate(d)
	fpdf.SetDefaultModificationDate(d)
	// Resource catalogs in a fixed order, not a map's.
	fpdf.SetDefaultCatalogSort(true)
}

// timeFlag is a --from/--to time such as "1.5ms".
type timeFlag struct {
	t   sim.Time
	set bool
}

func (f *timeFlag) String() string {
	if !f.set {
		return ""
	}
	return f.t.String()
}

func (f *timeFlag) Set(s string) error {
	v, err := units.Parse(s, units.Duration)
	switch {
	case err != nil || math.IsNaN(v):
		return fmt.Errorf("%q is not a time: use a number and a unit, such as 250us, 1.5ms or 2s", s)
	case noUnit(s) != nil:
		return noUnit(s)
	case v < 0:
		return fmt.Errorf("%q is before the run's start: give a time from 0, such as 250us, 1.5ms or 2s", s)
	case v*1e12 >= float64(sim.MaxTime):
		// A run may last that long (its times are int64 picoseconds),
		// and its end be zoomed on; the limit was 11.6 days.
		return fmt.Errorf("%q is past the longest time gpusim can simulate, %.0f s (%.1f days): give a time such as 250us, 1.5ms or 2s", s, math.Floor(sim.MaxTime.Seconds()), sim.MaxTime.Seconds()/86400)
	}
	f.t, f.set = sim.Time(math.Round(v*1e12)), true
	return nil
}

// noUnit refuses a time flag's number without a unit (but 0), as a
// scenario's durations are refused: it was read as seconds (--from 40
// meant as ms drew from 40 s).
func noUnit(s string) error {
	n := strings.TrimSpace(s)
	if v, err := strconv.ParseFloat(n, 64); err == nil && v != 0 {
		return fmt.Errorf("%q has no unit: give one, such as %sus, %sms or %ss", s, n, n, n)
	}
	return nil
}

// writePicture draws a picture atomically into name, in the format its
// extension names.
func writePicture(name string, draw func(out io.Writer, format string) error) error {
	format, err := plots.FormatOf(name)
	if err != nil {
		return &usageError{err.Error()}
	}
	return writeFileAtomic(name, func(out io.Writer) error { return draw(out, format) })
}

// writePlot renders p into name.
func writePlot(name string, p *plot.Plot, w, h vg.Length) error {
	return writePicture(name, func(out io.Writer, format string) error { return plots.Write(out, p, w, h, format) })
}

// writePlotGrid renders plots as a grid of tiles into name.
func writePlotGrid(name string, ps []*plot.Plot, cols int, w, h vg.Length) error {
	return writePicture(name, func(out io.Writer, format string) error { return plots.WriteGrid(out, ps, cols, w, h, format) })
}

// plotDir makes the directory plots go into.
func plotDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return &failError{fmt.Errorf("cannot make the plot directory: %v", err)}
	}
	return nil
}

// checkWindow says whether --from and --to make a window of res.
func checkWindow(res *sim.Result, from, to timeFlag) error {
	if to.set && to.t <= from.t {
		return &usageError{fmt.Sprintf("gpusim run: --to %s is not after --from %s", to.t, from.t)}
	}
	if from.set && from.t > 0 && from.t >= res.Makespan {
		return &usageError{fmt.Sprintf("gpusim run: --from %s is not before the end of the run, %s", from.t, res.Makespan)}
	}
	return nil
}

// plotRun writes timeline.png, timeline.svg and utilization.png of a run.
func plotRun(dir string, res *sim.Result, from, to timeFlag, measured bool) error {
	if err := checkWindow(res, from, to); err != nil {
		return err
	}
	if err := plotDir(dir); err != nil {
		return err
	}
	title := res.Program.Name + " on " + res.Machine.Name
	if measured {
		// Not to be taken for a prediction.
		title = res.Program.Name + ", measured on the GPUs (" + res.Machine.Name + ")"
	}
	opt := plots.TimelineOptions{Title: title, From: from.t}
	if to.set {
		opt.To = to.t
	}
	p, info, err := plots.Timeline(res, opt)
	if err != nil {
		return fmt.Errorf("gpusim run: %v", err)
	}
	window := ""
	if from.set || to.set {
		// The window in the axis unit, with the digits that tell its ends
		// apart: "88 to 92 ms", "50.000001 to 50.000005 s".
		window = fmt.Sprintf(", %s to %s %s", axisNumber(info.XMin, info.XMax-info.XMin), axisNumber(info.XMax, info.XMax-info.XMin), info.Unit)
		p.Title.Text += window
	}
	for _, name := range []string{"timeline.png", "timeline.svg"} {
		if err := writePlot(filepath.Join(dir, name), p, plots.TimelineWidth, info.Height); err != nil {
			return err
		}
	}
	// The same window as the timeline's.
	us, err := plots.UtilizationIn(res, title+window, 0, opt.From, opt.To)
	if err != nil {
		return fmt.Errorf("gpusim run: %v", err)
	}
	if measured {
		us = us[:1] // the hardware records no link's load: no links panel
	}
	return writePlotGrid(filepath.Join(dir, "utilization.png"), us, 1, plots.TimelineWidth, plots.Pixels(420))
}

// axisNumber writes v with enough decimals to tell apart values span apart.
func axisNumber(v, span float64) string {
	dec := 0
	if span > 0 {
		dec = max(0, int(math.Ceil(-math.Log10(span)))+1)
	}
	out := strconv.FormatFloat(v, 'f', min(dec, 9), 64)
	if strings.Contains(out, ".") {
		out = strings.TrimRight(strings.TrimRight(out, "0"), ".")
	}
	return out
}

// sweepMetrics are the columns --metric can plot, with their axis labels.
var sweepMetrics = []struct {
	name, title, label string
	value              func(r *sweepRow) float64
}{
	{"makespan", "makespan", "makespan", func(r *sweepRow) float64 { return r.MakespanS }},
	{"compute_mean", "mean GPU compute", "mean compute of the GPUs in use (% of the makespan)", func(r *sweepRow) float64 { return optional(r.ComputeMean, 100) }},
	{"idle_mean", "mean GPU idle", "mean idle of the GPUs in use (% of the makespan)", func(r *sweepRow) float64 { return 100 * r.IdleMean }},
	{"idle_max", "largest GPU idle", "largest idle of the GPUs in use (% of the makespan)", func(r *sweepRow) float64 { return 100 * r.IdleMax }},
	{"busiest_link_util", "busiest link's utilization", "busiest link utilization (%)", func(r *sweepRow) float64 { return 100 * r.LinkUtil }},
	{"tokens_per_s", "tokens a second", "throughput (tokens/s)", func(r *sweepRow) float64 { return optional(r.TokensPerS, 1) }},
	{"samples_per_s", "samples a second", "throughput (samples or sequences/s)", func(r *sweepRow) float64 { return optional(r.SamplesPerS, 1) }},
	{"mfu", "MFU", "model FLOPs utilization (%)", func(r *sweepRow) float64 { return optional(r.MFU, 100) }},
	{"first_token", "time to first token", "time to first token", func(r *sweepRow) float64 { return optional(r.FirstTokenS, 1) }},
	{"per_token", "time a token", "time a token after the first", func(r *sweepRow) float64 { return optional(r.PerTokenS, 1) }},
}

// timeMetric reports whether --metric name is a time (in seconds), drawn in
// the unit that suits its largest value.
func timeMetric(name string) bool {
	return name == "makespan" || name == "first_token" || name == "per_token"
}

// inferenceMetric reports whether --metric name is an inference's only.
func inferenceMetric(name string) bool {
	return name == "first_token" || name == "per_token"
}

// trainingMetric reports whether --metric name is a training's.
func trainingMetric(name string) bool {
	return name == "tokens_per_s" || name == "samples_per_s" || name == "mfu"
}

// optional is scale x *v, or NaN (no point drawn) for none.
func optional(v *float64, scale float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return scale * *v
}

func sweepMetricNames() string {
	var n []string
	for _, m := range sweepMetrics {
		n = append(n, m.name)
	}
	return strings.Join(n, ", ")
}

func checkSweepMetric(fs *flag.FlagSet, cmd, name, plotTo string) error {
	known := false
	for _, m := range sweepMetrics {
		known = known || m.name == name
	}
	if !known {
		return &usageError{fmt.Sprintf("gpusim %s: unknown --metric %q; metrics: %s", cmd, name, sweepMetricNames())}
	}
	if given(fs, "metric") && plotTo == "" {
		return &usageError{fmt.Sprintf("gpusim %s: --metric chooses what --plot DIR draws; add --plot", cmd)}
	}
	return nil
}

// plotSweep writes DIR/sweep.png: the metric against the first swept var of more than one value,
// one series per combination of the others.
func plotSweep(dir string, t *sweepTable, metric string) error {
	ok := 0
	for _, r := range t.Rows {
		if r.Error == "" {
			ok++
		}
	}
	if ok == 0 {
		return fmt.Errorf("%s: no point of the sweep ran (see the error column): there is nothing to plot", filepath.Join(dir, "sweep.png"))
	}
	if err := metricMissing(dir, t, metric); err != nil {
		return err
	}
	if err := plotDir(dir); err != nil {
		return err
	}
	p, err := sweepPlot(t, metric)
	if err != nil {
		return err
	}
	return writePlot(filepath.Join(dir, "sweep.png"), p, plots.Pixels(1100), plots.Pixels(700))
}

// metricMissing says where points of t ran and none has metric: there
// is nothing to plot.
func metricMissing(dir string, t *sweepTable, metric string) error {
	for _, m := range sweepMetrics {
		if m.name != metric {
			continue
		}
		has, ran := false, false
		for i := range t.Rows {
			ran = ran || t.Rows[i].Error == ""
			has = has || t.Rows[i].Error == "" && !math.IsNaN(m.value(&t.Rows[i]))
		}
		if ran && !has {
			return fmt.Errorf("%s: no point of the sweep has %s: %s", filepath.Join(dir, "sweep.png"), metric, noMetricWhy(t, metric))
		}
	}
	return nil
}

// noMetricWhy says why no point of t that ran has metric, and the
// metrics its points have.
func noMetricWhy(t *sweepTable, metric string) string {
	inference, work := false, false
	for i := range t.Rows {
		if r := &t.Rows[i]; r.Error == "" {
			inference = inference || r.FirstTokenS != nil
			work = work || r.SamplesPerS != nil
		}
	}
	var why string
	switch {
	case inference && metric == "mfu":
		why = "its points are an inference's, which has no MFU"
	case inference && metric == "per_token":
		why = "each of its points that ran generated one token (tokens: 1), so there is no time between tokens"
	case t.old && (trainingMetric(metric) || inferenceMetric(metric)):
		why = "an older gpusim wrote the table, without a training's rates or an inference's token times"
	case t.tokenless && inferenceMetric(metric):
		why = "an older gpusim wrote the table, without an inference's token times"
	case t.older && metric == "compute_mean":
		why = "an older gpusim wrote the table, without the GPUs' compute"
	case work && inferenceMetric(metric):
		why = "its points are a training's, which has no token times (or an inference's in an older gpusim's JSON table, without them)"
	case work && metric == "tokens_per_s":
		why = "its points count samples, not tokens (a training of a model given as a list of layers)"
	case work && metric == "mfu":
		why = "its points' model gives no FLOPs a sample or its GPUs no peak FLOPs (or they are an inference's, in an older gpusim's table, which has no MFU)"
	default:
		why = "its points run no training or inference block"
	}
	// What the table's points have instead.
	var have []string
	for _, m := range sweepMetrics {
		for i := range t.Rows {
			if r := &t.Rows[i]; m.name != metric && r.Error == "" && !math.IsNaN(m.value(r)) {
				have = append(have, m.name)
				break
			}
		}
	}
	return why + "; plot one its points have: " + strings.Join(have, ", ")
}

func sweepPlot(t *sweepTable, metric string) (*plot.Plot, error) {
	var m = sweepMetrics[0]
	for _, x := range sweepMetrics {
		if x.name == metric {
			m = x
		}
	}
	if len(t.Vars) == 0 {
		return nil, fmt.Errorf("%s: the sweep has no vars to plot against", t.Scenario)
	}
	// The x axis is the first var of more than one value among the rows
	// (a var swept over one value, or a shard's, would make a single
	// point of each series); the series, the values of the others that
	// have more than one.
	distinct := make([]map[string]bool, len(t.Vars))
	for k := range t.Vars {
		distinct[k] = map[string]bool{}
		for _, r := range t.Rows {
			distinct[k][r.Values[k]] = true
		}
	}
	xk := 0
	for k := range t.Vars {
		if len(distinct[k]) > 1 {
			xk = k
			break
		}
	}
	// The x values, in the order of the sweep's.
	var xs []string
	xi := map[string]int{}
	for _, r := range t.Rows {
		if _, ok := xi[r.Values[xk]]; !ok {
			xi[r.Values[xk]] = len(xs)
			xs = append(xs, r.Values[xk])
		}
	}
	// Plain numbers go on a numeric axis, and so do quantities of one kind
	// that grow by factors (sizes, durations, ...: at their values in
	// bytes, seconds, ..., on a log axis, labelled as written); anything
	// else (names) is one tick per value, equally spaced, labelled as
	// written.
	numeric := true
	xv := make([]float64, len(xs))
	for i, s := range xs {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || !finiteF(v) {
			numeric = false
			break
		}
		xv[i] = v
	}
	quantities := false
	if !numeric {
		// Quantities only where they grow by factors, on a log axis: on a
		// linear one 0 B, 1 MiB and 16 MiB beside 1 GiB would print their
		// labels over each other, and so would 1 MiB written twice (1 MiB,
		// 1048576 B); as categories they stay apart.
		if v, ok := quantityValues(xs); ok && geometric(v) {
			xv, quantities, numeric = v, true, true
		}
	}
	if !numeric {
		xv = make([]float64, len(xs))
		for i := range xv {
			xv[i] = float64(i)
		}
	}
	// The y unit: the largest in which the longest makespan is 1 or more,
	// as on every time axis (plots' timeUnit): no tick reaches 1000.
	scale, unit := 1.0, ""
	if timeMetric(m.name) {
		hi := 0.0
		for i := range t.Rows {
			if v := m.value(&t.Rows[i]); t.Rows[i].Error == "" && !math.IsNaN(v) {
				hi = math.Max(hi, v)
			}
		}
		switch {
		case hi >= 1:
			scale, unit = 1, "s"
		case hi >= 1e-3:
			scale, unit = 1e3, "ms"
		default:
			scale, unit = 1e6, "us"
		}
	}
	var series []plots.Series
	si := map[string]int{}
	for i := range t.Rows {
		r := &t.Rows[i]
		var parts []string
		for k := range t.Vars {
			if k == xk || len(distinct[k]) < 2 {
				continue
			}
			parts = append(parts, t.Vars[k]+"="+r.Values[k])
		}
		key := strings.Join(parts, ", ")
		n, ok := si[key]
		if !ok {
			n = len(series)
			si[key] = n
			name := key
			if name == "" {
				name = m.label
			}
			series = append(series, plots.Series{Name: name})
		}
		y := math.NaN()
		if r.Error == "" {
			y = m.value(r) * scale
		}
		series[n].X = append(series[n].X, xv[xi[r.Values[xk]]])
		series[n].Y = append(series[n].Y, y)
	}
	ylabel := m.label
	if unit != "" {
		ylabel += " (" + unit + ")"
	}
	// Name the machine when every point that loaded ran on the same one
	// (a table read back from a file does not say).
	topology, same := "", true
	failed, without := 0, 0 // points that failed, and that ran without the metric
	for i := range t.Rows {
		r := &t.Rows[i]
		if r.Error != "" {
			failed++
		} else if math.IsNaN(m.value(r)) {
			without++
		}
		if r.Topology == "" {
			continue
		}
		if topology != "" && r.Topology != topology {
			same = false
		}
		topology = r.Topology
	}
	if !same {
		topology = ""
	}
	title := t.Scenario
	if topology != "" {
		title += " on " + topology
	}
	title += ": " + m.title + " against " + t.Vars[xk]
	if t.Partial || len(t.Rows) < t.Total {
		title += fmt.Sprintf(" (%d of %d points)", len(t.Rows), t.Total)
	}
	if failed > 0 {
		title += fmt.Sprintf(" (%d failed, not drawn)", failed)
	}
	if without > 0 {
		title += fmt.Sprintf(" (%d without %s, not drawn)", without, m.name)
	}
	var ticks []string
	if !numeric {
		ticks = xs
	}
	logX := numeric && geometric(xv)
	p, err := plots.Lines(title, t.Vars[xk], ylabel, series, logX, ticks)
	if err != nil {
		return nil, err
	}
	if logX {
		p.X.Label.Text += ", log scale"
	}
	// Over a log x axis, throughputs and times that grow or shrink with x
	// (by 4 times or more) go on a log y axis too: a power law is then a
	// straight line (linear scaling with the GPUs, time with the bytes).
	// Shares (idle, MFU, utilization) only where they span two decades.
	span := 100.0
	if logX && (timeMetric(m.name) || m.name == "tokens_per_s" || m.name == "samples_per_s") {
		span = 4
	}
	if plots.LogY(p, series, span) {
		p.Y.Label.Text += ", log scale"
	}
	if numeric && (len(xs) <= 16 || quantities) {
		// A tick at each swept value, as written in the scenario; of many
		// quantities (whose values in bytes or seconds would make poor
		// labels), at every so many in order, 16 at most.
		order := make([]int, len(xs))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool { return xv[order[a]] < xv[order[b]] })
		every := (len(xs) + 15) / 16
		var ts []plot.Tick
		for j, i := range order {
			t := plot.Tick{Value: xv[i]}
			if j%every == 0 {
				t.Label = strings.TrimSpace(xs[i])
			}
			ts = append(ts, t)
		}
		p.X.Tick.Marker = plot.ConstantTicks(ts)
	}
	return p, nil
}

// quantityValues reads a sweep's values as quantities of one kind (sizes,
// bandwidths, durations, FLOP counts or rates) in that kind's base unit,
// and reports whether they all are, at least one with its unit.
func quantityValues(xs []string) ([]float64, bool) {
	unit := false
	for _, s := range xs {
		unit = unit || !units.Bare(s)
	}
	if !unit {
		return nil, false
	}
kinds:
	for k := units.Bytes; k <= units.FLOPRate; k++ {
		v := make([]float64, len(xs))
		for i, s := range xs {
			x, err := units.Parse(s, k)
			if err != nil || !finiteF(x) {
				continue kinds
			}
			v[i] = x
		}
		return v, true
	}
	return nil, false
}

func finiteF(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// geometric reports whether swept values read best on a log axis: three
// or more, all positive, each at least 1.5 times the one below it, and
// spanning a factor of 8 or more (1, 2, 4, ... 1024 crowded the first
// ticks into "2481632" on a linear axis, and bent a straight power law).
func geometric(xs []float64) bool {
	if len(xs) < 3 {
		return false
	}
	v := slices.Clone(xs)
	slices.Sort(v)
	if v[0] <= 0 || v[len(v)-1] < 8*v[0] {
		return false
	}
	for i := 1; i < len(v); i++ {
		if v[i] < 1.5*v[i-1] {
			return false
		}
	}
	return true
}

// plotNCCLTests writes busbw and algbw against size.
func plotNCCLTests(name string, t *topologies.Topology, cfg mirror.NCCLTestsConfig, gpus int, rows []mirror.NCCLRow) error {
	bus := plots.Series{Name: "busbw"}
	alg := plots.Series{Name: "algbw"}
	for _, r := range rows {
		if r.Size <= 0 {
			continue // no bandwidth, and no place on the log axis
		}
		bus.X, bus.Y = append(bus.X, float64(r.Size)), append(bus.Y, r.BusBW)
		alg.X, alg.Y = append(alg.X, float64(r.Size)), append(alg.Y, r.AlgBW)
	}
	if len(bus.X) == 0 {
		least := mirror.LeastNCCLSize(cfg.Op, gpus, cfg.DType)
		how := fmt.Sprintf("whole elements of -d, %d bytes each", cfg.DType.Size())
		if least > int64(cfg.DType.Size()) {
			how = fmt.Sprintf("16 bytes a rank for %s, over %d ranks", cfg.Op, gpus)
		}
		return &usageError{fmt.Sprintf("gpusim nccl-tests: --plot %s: every size is 0 bytes (rounded down to %s, as nccl-tests does), which has no bandwidth to draw; give -e of at least %d", name, how, least)}
	}
	title := fmt.Sprintf("nccl-tests %s_perf on %s, %d GPUs (predicted)", cfg.Op, t.Name, gpus)
	if cfg.Procs > 1 {
		title = fmt.Sprintf("nccl-tests %s_perf on %s, %d GPUs in %d processes (predicted)", cfg.Op, t.Name, gpus, cfg.Procs)
	}
	series, ylabel := []plots.Series{bus, alg}, "bandwidth (GB/s)"
	if slices.Equal(bus.Y, alg.Y) {
		// A bus factor of 1 (sendrecv, broadcast, reduce, one GPU): one
		// curve, named for both, not one hidden under the other.
		series, ylabel = series[:1], "busbw = algbw (GB/s)"
	}
	p, err := plots.Lines(title, "message size", ylabel, series, true, nil)
	if err != nil {
		return err
	}
	p.X.Tick.Marker = plots.SizeTicks{}
	return writePlot(name, p, plots.Pixels(1100), plots.Pixels(700))
}

// plotMatrices writes one heatmap per matrix, in a grid.
func plotMatrices(name, machine string, ms []*mirror.Matrix) error {
	var ps []*plot.Plot
	var hs []vg.Length
	maxCols := 1
	for _, m := range ms {
		v := make([][]float64, len(m.Rows))
		notes := make([][]string, len(m.Rows))
		for r := range m.Rows {
			v[r] = make([]float64, len(m.Cols))
			notes[r] = make([]string, len(m.Cols))
			for c := range m.Cols {
				v[r][c] = math.NaN()
				notes[r][c] = "N/A" // as the tool prints a pair it does not measure
				if x := m.Cells[r][c]; x != nil {
					v[r][c], notes[r][c] = *x, ""
				}
			}
		}
		p, err := plots.Heatmap(m.Name+"\n"+machine+", predicted", axisOf(m.Title, "(column)"), axisOf(m.Title, "(row)"), m.Rows, m.Cols, v, notes, m.Unit)
		if err != nil {
			return err
		}
		p.Title.TextStyle.Font.Size = 12
		ps = append(ps, p)
		hs = append(hs, plots.Pixels(float64(130+48*len(m.Rows))))
		maxCols = max(maxCols, len(m.Cols))
	}
	w := plots.Pixels(math.Max(640, float64(160+64*maxCols)))
	cols := 1
	if len(ps) > 1 {
		cols = 2
	}
	return writePicture(name, func(out io.Writer, format string) error { return plots.WriteSheet(out, ps, cols, w, hs, format) })
}

// axisOf names a matrix axis from the tool's title, "memcpy CE CPU(row) ->
// GPU(column) ...": the word before the marker ("CPU"), as "source CPU" for
// rows and "destination GPU" for columns.
func axisOf(title, marker string) string {
	role := map[string]string{"(row)": "row", "(column)": "column"}[marker]
	i := strings.Index(title, marker)
	if i < 0 {
		return role
	}
	f := strings.Fields(title[:i])
	if len(f) == 0 {
		return role
	}
	return f[len(f)-1] + " (" + role + ")"
}

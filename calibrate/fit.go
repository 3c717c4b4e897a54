package calibrate

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/stat"
)

// Stats summarises repeated measurements of one quantity with order
// statistics, which a few wild timings cannot move far. All fields except N
// are in the unit of the input (seconds, for timings).
//
// Percentiles interpolate linearly between order statistics: with the n
// values sorted as s[0] <= ... <= s[n-1], the p-quantile is read at the
// zero-based position h = p*(n-1), that is s[⌊h⌋] + (h-⌊h⌋)*(s[⌊h⌋+1]-s[⌊h⌋]).
// This is Hyndman and Fan's definition 7, the default of R's quantile and
// NumPy's percentile; with it the median of an odd count is the middle
// value and P0 and P100 are Min and Max. (gonum's stat.Quantile with
// stat.LinInterp is definition 4, h = p*n, whose median of {1,2,3,4,100}
// is 2.5; it is not used here for that reason.)
type Stats struct {
	// N is the number of values summarised. Zero means the input was
	// empty, and then every other field is zero too.
	N int
	// Median is the 0.5-quantile.
	Median float64
	// Min and Max are the smallest and largest values.
	Min, Max float64
	// P10 and P90 are the 0.1- and 0.9-quantiles.
	P10, P90 float64
	// MAD is the median absolute deviation from the median, unscaled
	// (multiply by 1.4826 to estimate a normal standard deviation).
	MAD float64
}

// Summarize returns the order statistics of xs. It does not modify xs; it
// sorts a copy, in O(n log n) time and O(n) space. An empty xs gives the
// zero Stats. If any value is NaN, N is set and every other field is NaN.
func Summarize(xs []float64) Stats {
	n := len(xs)
	if n == 0 {
		return Stats{}
	}
	if floats.HasNaN(xs) {
		nan := math.NaN()
		return Stats{N: n, Median: nan, Min: nan, Max: nan, P10: nan, P90: nan, MAD: nan}
	}
	s := sortedCopy(xs)
	med := quantileSorted(s, 0.5)
	return Stats{
		N:      n,
		Median: med,
		Min:    s[0],
		Max:    s[n-1],
		P10:    quantileSorted(s, 0.1),
		P90:    quantileSorted(s, 0.9),
		MAD:    medianAbsDev(s, med),
	}
}

// Sample is one measurement for a straight-line fit.
type Sample struct {
	// X is the size of the operation: bytes for a copy, FLOPs for a
	// kernel. It must be finite and non-negative; zero is allowed (an
	// empty copy measures the latency alone).
	X float64
	// Y is the measured time in seconds. It must be finite and positive.
	Y float64
}

// Line is a fitted straight line y = Intercept + Slope*x, with how well it
// fits.
type Line struct {
	// Intercept is y at x = 0 (seconds, for timings). It is never
	// negative: see FitLine.
	Intercept float64
	// Slope is dy/dx (seconds per byte or per FLOP, for timings).
	Slope float64
	// Residual is the robust relative misfit: the median over the samples
	// kept (not outliers) of |y - fit|/fit. 0.01 means half the kept
	// samples lie within 1% of the line.
	Residual float64
	// Outliers is the number of samples whose final robust weight is zero:
	// they did not influence the line.
	Outliers int
	// N is the number of samples given, outliers included.
	N int
}

// Constants of the robust fit.
const (
	// maxHuberIter and maxTukeyIter bound the two phases of FitLine; 50
	// iterations in all.
	maxHuberIter = 20
	maxTukeyIter = 30
	// huberK and tukeyC are the tuning constants, in robust standard
	// deviations, that give 95% efficiency on normal errors.
	huberK = 1.345
	tukeyC = 4.685
	// madToSigma turns a median absolute deviation into a normal standard
	// deviation: 1/Φ⁻¹(3/4).
	madToSigma = 1.482602218505602
	// minScale is the smallest relative scale the fit believes, one part
	// in 10⁹. No timer is that repeatable; without a floor, exact
	// synthetic data would give a scale of rounding error and call
	// rounding error an outlier.
	minScale = 1e-9
	// convergeTol stops an iteration phase when no fitted value moved by
	// more than this fraction.
	convergeTol = 1e-10
)

// FitLine fits y = Intercept + Slope*x to samples, minimising relative
// rather than absolute error and ignoring outliers.
//
// Timings of copies from a few KiB to a GiB span six orders of magnitude;
// an ordinary least-squares fit would spend all its effort on the largest
// sizes and leave the intercept (the latency) to their noise. FitLine instead
// measures each sample's residual relative to the fitted value, r = (y -
// fit)/fit, which in the least squares means weighting each sample by
// 1/fit².
//
// The algorithm is iteratively reweighted least squares:
//
//  1. Start: the weighted least-squares line through the median y of each
//     distinct x, with weights 1/median². Repeated measurements at a size
//     are thus robust from the start.
//  2. Each iteration computes r for every sample, a scale σ = 1.4826 ×
//     MAD(r) (at least 10⁻⁹), and refits with weight ψ(r/σ)/(r/σ) / fit²
//     using gonum's stat.LinearRegression.
//  3. Up to 20 iterations use Huber's weights (k = 1.345), which are convex
//     and so cannot be trapped by a poor start; then up to 30 use Tukey's
//     biweight (c = 4.685), which gives samples beyond c·σ weight zero. A
//     phase ends when no fitted value moves by more than 10⁻¹⁰ relative.
//
// Where the fitted value is not positive (possible only with a negative
// slope), the sample's own y stands in as the denominator of r.
//
// The intercept is constrained to be non-negative: a time cannot be
// negative at size zero, but noise on data whose true intercept is zero or
// tiny can push the least-squares intercept slightly below zero. Whenever a
// weighted fit gives a negative intercept, the intercept is clamped to 0 and
// the slope refitted alone through the origin with the same weights, which
// is the exact least-squares solution under the constraint.
//
// FitLine returns an error, never panics, for fewer than 2 samples, fewer
// than 2 distinct x, any x negative or not finite, any y not positive or not
// finite, and if the robust weights leave fewer than 2 distinct x to fit.
// It does not modify samples. Each iteration costs O(n log n) (the median);
// there are at most 50.
func FitLine(samples []Sample) (Line, error) {
	if err := validateSamples(samples); err != nil {
		return Line{}, err
	}
	n := len(samples)
	x := make([]float64, n)
	y := make([]float64, n)
	for i, s := range samples {
		x[i], y[i] = s.X, s.Y
	}

	a, b, err := startFit(samples)
	if err != nil {
		return Line{}, err
	}

	r := make([]float64, n)
	d := make([]float64, n)
	w := make([]float64, n)
	phases := []struct {
		weight  func(u float64) float64
		maxIter int
	}{
		{huberWeight, maxHuberIter},
		{tukeyWeight, maxTukeyIter},
	}
	for _, ph := range phases {
		for range ph.maxIter {
			scale := relResiduals(a, b, x, y, r, d)
			for i := range w {
				w[i] = ph.weight(r[i]/scale) / (d[i] * d[i])
			}
			a2, b2, err := weightedFit(x, y, w)
			if err != nil {
				return Line{}, err
			}
			done := converged(a, b, a2, b2, x)
			a, b = a2, b2
			if done {
				break
			}
		}
	}

	// Classify with the final line and the final scale.
	scale := relResiduals(a, b, x, y, r, d)
	line := Line{Intercept: a, Slope: b, N: n}
	kept := make([]float64, 0, n)
	for i := range r {
		if tukeyWeight(r[i]/scale) == 0 {
			line.Outliers++
			continue
		}
		kept = append(kept, math.Abs(r[i]))
	}
	if len(kept) > 0 {
		line.Residual = quantileSorted(sortedCopy(kept), 0.5)
	}
	return line, nil
}

// LatencyBandwidth is a fitted transfer model: time = Latency +
// bytes/Bandwidth.
type LatencyBandwidth struct {
	// Latency is the time of an empty transfer, in seconds; never
	// negative.
	Latency float64
	// Bandwidth is the asymptotic rate, in bytes per second; always
	// positive and finite.
	Bandwidth float64
	// Residual is the robust relative misfit of the line (Line.Residual).
	Residual float64
	// Outliers is the number of samples the fit ignored; N is the number
	// given.
	Outliers, N int
}

// FitLatencyBandwidth fits time = latency + bytes/bandwidth to samples of
// (bytes, seconds) with FitLine; see FitLine for the method and the errors.
// It is also an error if the fitted slope is not positive: the times do not
// grow with size, so no bandwidth can be read from them.
func FitLatencyBandwidth(samples []Sample) (LatencyBandwidth, error) {
	line, err := FitLine(samples)
	if err != nil {
		return LatencyBandwidth{}, err
	}
	if !(line.Slope > 0) {
		return LatencyBandwidth{}, fmt.Errorf("calibrate: fitted slope %.4g s/byte is not positive: the times do not grow with size, so they give no bandwidth", line.Slope)
	}
	bw := 1 / line.Slope
	if math.IsInf(bw, 0) {
		return LatencyBandwidth{}, fmt.Errorf("calibrate: fitted slope %.4g s/byte is too small to give a finite bandwidth", line.Slope)
	}
	return LatencyBandwidth{
		Latency:   line.Intercept,
		Bandwidth: bw,
		Residual:  line.Residual,
		Outliers:  line.Outliers,
		N:         line.N,
	}, nil
}

// efficiencyNoise is how far a measured rate may exceed its peak, as a
// fraction, before Efficiency blames the peak rather than the noise.
const efficiencyNoise = 0.05

// Efficiency returns measuredRate/peakRate, the fraction of a peak (a
// preset's bandwidth or FLOP rate) that the hardware reached; both rates in
// the same unit. The result is in (0, 1].
//
// A measured rate above the peak by less than 5% is taken as measurement
// noise: the result is 1 and the error nil. Above the peak by 5% or more,
// the peak itself is wrong, and that is an error. It is also an error if
// either rate is zero, negative, NaN or infinite.
func Efficiency(measuredRate, peakRate float64) (float64, error) {
	if !(measuredRate > 0) || math.IsInf(measuredRate, 0) {
		return 0, fmt.Errorf("calibrate: measured rate %.4g must be positive and finite", measuredRate)
	}
	if !(peakRate > 0) || math.IsInf(peakRate, 0) {
		return 0, fmt.Errorf("calibrate: peak rate %.4g must be positive and finite", peakRate)
	}
	e := measuredRate / peakRate
	switch {
	case e >= 1+efficiencyNoise:
		return 0, fmt.Errorf("calibrate: measured rate %.4g exceeds the peak %.4g by %.1f%% (more than the %.0f%% allowed for noise): the peak is wrong",
			measuredRate, peakRate, (e-1)*100, efficiencyNoise*100)
	case e > 1:
		return 1, nil
	case e == 0:
		return 0, fmt.Errorf("calibrate: measured rate %.4g is too small against the peak %.4g to give an efficiency", measuredRate, peakRate)
	}
	return e, nil
}

// maxReported bounds how many bad samples one error lists.
const maxReported = 5

// validateSamples reports every bad sample (up to maxReported, then a
// count) and whether there are enough distinct sizes to fit a line.
func validateSamples(samples []Sample) error {
	if len(samples) < 2 {
		return fmt.Errorf("calibrate: a line fit needs at least 2 samples, got %d", len(samples))
	}
	var errs []error
	bad := 0
	report := func(format string, args ...any) {
		bad++
		if bad <= maxReported {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	for i, s := range samples {
		switch {
		case math.IsNaN(s.X) || math.IsInf(s.X, 0):
			report("calibrate: sample %d: size %g is not finite", i, s.X)
		case s.X < 0:
			report("calibrate: sample %d: size %g is negative", i, s.X)
		}
		switch {
		case math.IsNaN(s.Y) || math.IsInf(s.Y, 0):
			report("calibrate: sample %d: time %g is not finite", i, s.Y)
		case s.Y < 0:
			report("calibrate: sample %d: time %g is negative", i, s.Y)
		case s.Y == 0:
			report("calibrate: sample %d: time is zero; a relative fit needs positive times", i)
		}
	}
	if bad > maxReported {
		errs = append(errs, fmt.Errorf("calibrate: and %d more bad samples", bad-maxReported))
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	first := samples[0].X
	for _, s := range samples[1:] {
		if s.X != first {
			return nil
		}
	}
	return fmt.Errorf("calibrate: a line fit needs at least 2 distinct sizes; all %d samples have size %g", len(samples), first)
}

// startFit is the starting line: the weighted least-squares fit, with
// relative weights, through the median y of each distinct x.
func startFit(samples []Sample) (a, b float64, err error) {
	s := make([]Sample, len(samples))
	copy(s, samples)
	sort.SliceStable(s, func(i, j int) bool { return s[i].X < s[j].X })
	var xs, ms, ws, group []float64
	for i := 0; i < len(s); {
		j := i
		group = group[:0]
		for ; j < len(s) && s[j].X == s[i].X; j++ {
			group = append(group, s[j].Y)
		}
		m := quantileSorted(sortedCopy(group), 0.5)
		xs = append(xs, s[i].X)
		ms = append(ms, m)
		ws = append(ws, 1/(m*m))
		i = j
	}
	return weightedFit(xs, ms, ws)
}

// weightedFit minimises Σ w[i]·(y[i] - a - b·x[i])² subject to a >= 0.
// Zero weights drop samples; at least 2 distinct x must keep a positive
// weight.
func weightedFit(x, y, w []float64) (a, b float64, err error) {
	var sum float64
	kept := 0
	first, distinct := math.NaN(), false
	for i, wi := range w {
		if !(wi > 0) {
			continue
		}
		sum += wi
		kept++
		if kept == 1 {
			first = x[i]
		} else if x[i] != first {
			distinct = true
		}
	}
	if !distinct || math.IsInf(sum, 0) {
		return 0, 0, fmt.Errorf("calibrate: the robust weights leave fewer than 2 distinct sizes (%d of %d samples kept); the data fit no single line", kept, len(x))
	}
	// stat.LinearRegression divides sums by (Σw - 1) in both the
	// covariance and the variance; scaling the weights to sum to the
	// number kept keeps that divisor positive whatever the unit of w.
	wn := make([]float64, len(w))
	for i, wi := range w {
		if wi > 0 {
			wn[i] = wi / sum * float64(kept)
		}
	}
	a, b = stat.LinearRegression(x, y, wn, false)
	if a < 0 {
		a = 0
		_, b = stat.LinearRegression(x, y, wn, true)
	}
	if math.IsNaN(a) || math.IsNaN(b) || math.IsInf(a, 0) || math.IsInf(b, 0) {
		return 0, 0, fmt.Errorf("calibrate: weighted least squares gave a non-finite line (intercept %g, slope %g)", a, b)
	}
	return a, b, nil
}

// relResiduals fills r with the relative residuals (y - fit)/d of the line
// a + b·x, and d with their denominators (the fitted value, or y where the
// fit is not positive), and returns the robust scale of r.
func relResiduals(a, b float64, x, y, r, d []float64) (scale float64) {
	for i := range x {
		f := a + float64(b*x[i])
		if !(f > 0) {
			f = y[i]
		}
		d[i] = f
		r[i] = (y[i] - f) / f
	}
	s := sortedCopy(r)
	return max(madToSigma*medianAbsDev(s, quantileSorted(s, 0.5)), minScale)
}

// converged reports whether no fitted value moved by more than convergeTol
// relative between the lines (a, b) and (a2, b2).
func converged(a, b, a2, b2 float64, x []float64) bool {
	for _, xi := range x {
		f := a + float64(b*xi)
		f2 := a2 + float64(b2*xi)
		if math.Abs(f2-f) > convergeTol*math.Abs(f) {
			return false
		}
	}
	return true
}

// huberWeight is Huber's ψ(u)/u: 1 inside ±huberK, then huberK/|u|.
func huberWeight(u float64) float64 {
	if au := math.Abs(u); au > huberK {
		return huberK / au
	}
	return 1
}

// tukeyWeight is Tukey's biweight ψ(u)/u: (1 - (u/c)²)² inside ±tukeyC,
// zero outside.
func tukeyWeight(u float64) float64 {
	if math.Abs(u) >= tukeyC {
		return 0
	}
	t := u / tukeyC
	t = 1 - float64(t*t)
	return t * t
}

// sortedCopy returns xs sorted ascending, leaving xs alone.
func sortedCopy(xs []float64) []float64 {
	s := make([]float64, len(xs))
	copy(s, xs)
	sort.Float64s(s)
	return s
}

// quantileSorted is the p-quantile of the ascending, non-empty s by linear
// interpolation at position p*(n-1) (see Stats).
func quantileSorted(s []float64, p float64) float64 {
	h := p * float64(len(s)-1)
	lo := int(math.Floor(h))
	frac := h - float64(lo)
	if frac == 0 || lo+1 >= len(s) {
		return s[min(lo, len(s)-1)]
	}
	return s[lo] + float64(frac*(s[lo+1]-s[lo]))
}

// medianAbsDev is the median of |s[i] - center| for the non-empty s.
func medianAbsDev(s []float64, center float64) float64 {
	dev := make([]float64, len(s))
	for i, v := range s {
		dev[i] = math.Abs(v - center)
	}
	sort.Float64s(dev)
	return quantileSorted(dev, 0.5)
}

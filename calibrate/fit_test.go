package calibrate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat"
)

// The copy every synthetic test imitates: 2.5 µs to start, then 50 GB/s.
const (
	wantLatency   = 2.5e-6 // s
	wantBandwidth = 50e9   // bytes/s
)

// seeds are the random seeds every randomized test runs; a failure names its
// seed, so `go test -run 'Name/seed=3'` repeats it.
var seeds = []uint64{1, 2, 3, 4, 5, 6, 7, 8}

// newRand is the seeded source a test draws from; nothing uses a global.
func newRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
}

// logSizes returns sizes from 4 KiB to 1 GiB, two per octave (37 sizes).
func logSizes() []float64 {
	var xs []float64
	for k := 0; k <= 36; k++ {
		xs = append(xs, math.Round(math.Exp2(12+float64(k)/2)))
	}
	return xs
}

// copyTimes times each size repeats times as latency + bytes/bandwidth,
// each time multiplied by 1+e with e uniform in ±noise.
func copyTimes(rng *rand.Rand, latency, bandwidth float64, repeats int, noise float64) []Sample {
	var out []Sample
	for _, x := range logSizes() {
		for range repeats {
			e := noise * (2*rng.Float64() - 1)
			out = append(out, Sample{X: x, Y: (latency + x/bandwidth) * (1 + e)})
		}
	}
	return out
}

// plantOutliers multiplies a fraction of the samples, at positions drawn
// from rng, by 3 or by 0.3 (chosen by rng), and returns how many it planted.
func plantOutliers(rng *rand.Rand, s []Sample, fraction float64) int {
	k := int(math.Round(fraction * float64(len(s))))
	for _, i := range rng.Perm(len(s))[:k] {
		if rng.IntN(2) == 0 {
			s[i].Y *= 3
		} else {
			s[i].Y *= 0.3
		}
	}
	return k
}

func relErr(got, want float64) float64 { return math.Abs(got-want) / math.Abs(want) }

func TestFitLatencyBandwidthRecoversKnownParameters(t *testing.T) {
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			samples := copyTimes(newRand(seed), wantLatency, wantBandwidth, 7, 0.01)
			got := checkLatencyBandwidth(t, seed, samples, wantLatency, wantBandwidth, 0.02)
			if got.N != len(samples) {
				t.Errorf("seed %d: N = %d, want %d", seed, got.N, len(samples))
			}
			// Uniform ±1% noise has median |e| of 0.5%; nothing lies
			// beyond 4.685 robust standard deviations.
			if got.Outliers != 0 {
				t.Errorf("seed %d: %d outliers in data with none planted", seed, got.Outliers)
			}
			if got.Residual > 0.008 || got.Residual < 0.002 {
				t.Errorf("seed %d: residual %.4f, want about 0.005 (median of |uniform ±1%%|)", seed, got.Residual)
			}
		})
	}
}

// With repeats, the start takes the median time of each size; without them
// the outliers enter the starting fit at full weight, and the Huber phase
// must still recover.
func TestFitLatencyBandwidthIgnoresOutliers(t *testing.T) {
	for _, repeats := range []int{7, 1} {
		for _, seed := range seeds {
			t.Run(fmt.Sprintf("repeats=%d/seed=%d", repeats, seed), func(t *testing.T) {
				rng := newRand(seed)
				samples := copyTimes(rng, wantLatency, wantBandwidth, repeats, 0.01)
				planted := plantOutliers(rng, samples, 0.10)
				got := checkLatencyBandwidth(t, seed, samples, wantLatency, wantBandwidth, 0.03)
				if min := int(math.Ceil(0.8 * float64(planted))); got.Outliers < min || got.Outliers > planted {
					t.Errorf("seed %d: %d outliers, want between %d and the %d planted", seed, got.Outliers, min, planted)
				}
			})
		}
	}
}

// An ordinary (unweighted) least-squares fit measures error in seconds, so
// the noise and outliers of the 1 GiB copies (20 ms each) swamp a 2.5 µs
// latency; the robust relative fit is not moved.
func TestFitLineWhereOrdinaryLeastSquaresFails(t *testing.T) {
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := newRand(seed)
			samples := copyTimes(rng, wantLatency, wantBandwidth, 7, 0.01)
			plantOutliers(rng, samples, 0.10)
			x := make([]float64, len(samples))
			y := make([]float64, len(samples))
			for i, s := range samples {
				x[i], y[i] = s.X, s.Y
			}
			olsLatency, _ := stat.LinearRegression(x, y, nil, false)
			if e := relErr(olsLatency, wantLatency); e <= 0.5 {
				t.Fatalf("seed %d: the data are too easy: OLS latency %g s is within 50%% of %g s", seed, olsLatency, wantLatency)
			}
			line, err := FitLine(samples)
			if err != nil {
				t.Fatalf("seed %d: FitLine: %v", seed, err)
			}
			if e := relErr(line.Intercept, wantLatency); e > 0.03 {
				t.Errorf("seed %d: robust latency %g s, want %g s within 3%% (OLS gave %g s)", seed, line.Intercept, wantLatency, olsLatency)
			}
		})
	}
}

// With no latency at all, noise pushes the unconstrained intercept either
// way; FitLine never reports a negative one and still finds the slope.
func TestFitLineZeroInterceptStaysNonNegative(t *testing.T) {
	clamped := 0
	for _, seed := range seeds {
		samples := copyTimes(newRand(seed), 0, wantBandwidth, 7, 0.01)
		line, err := FitLine(samples)
		if err != nil {
			t.Fatalf("seed %d: FitLine: %v", seed, err)
		}
		if line.Intercept < 0 {
			t.Errorf("seed %d: intercept %g s is negative", seed, line.Intercept)
		}
		if line.Intercept == 0 {
			clamped++
		}
		if e := relErr(1/line.Slope, wantBandwidth); e > 0.02 {
			t.Errorf("seed %d: bandwidth %g B/s, want %g B/s within 2%%", seed, 1/line.Slope, wantBandwidth)
		}
		// Relative to the smallest time (82 ns), the intercept is noise.
		if line.Intercept > 0.01*4096/wantBandwidth {
			t.Errorf("seed %d: intercept %g s, want about 0", seed, line.Intercept)
		}
	}
	if clamped == 0 {
		t.Errorf("no seed of %v clamped the intercept to 0; the test no longer exercises the clamp", seeds)
	}
}

// The clamp, computed by hand: through (1,0.5) (2,2) (3,3) (4,4) with equal
// weights, least squares gives slope Sxy/Sxx = 5.75/5 = 1.15 and intercept
// 2.375 - 1.15·2.5 = -0.5; through the origin the slope is Σxy/Σx² =
// 29.5/30.
func TestWeightedFitClampsNegativeIntercept(t *testing.T) {
	x := []float64{1, 2, 3, 4}
	y := []float64{0.5, 2, 3, 4}
	w := []float64{1, 1, 1, 1}
	if a, _ := stat.LinearRegression(x, y, w, false); math.Abs(a-(-0.5)) > 1e-12 {
		t.Fatalf("unconstrained intercept %g, want -0.5 (hand computation wrong)", a)
	}
	a, b, err := weightedFit(x, y, w)
	if err != nil {
		t.Fatal(err)
	}
	if a != 0 || math.Abs(b-29.5/30) > 1e-12 {
		t.Errorf("weightedFit = (%g, %g), want (0, %g)", a, b, 29.5/30)
	}
}

func TestFitLineIsDeterministicAndOrderFree(t *testing.T) {
	for _, seed := range seeds {
		rng := newRand(seed)
		samples := copyTimes(rng, wantLatency, wantBandwidth, 7, 0.01)
		plantOutliers(rng, samples, 0.10)
		first, err1 := FitLine(samples)
		second, err2 := FitLine(samples)
		if err1 != nil || err2 != nil {
			t.Fatalf("seed %d: FitLine: %v, %v", seed, err1, err2)
		}
		if first != second {
			t.Errorf("seed %d: two fits of the same data differ:\n%+v\n%+v", seed, first, second)
		}
		shuffled := slices.Clone(samples)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		third, err := FitLine(shuffled)
		if err != nil {
			t.Fatalf("seed %d: FitLine(shuffled): %v", seed, err)
		}
		if relErr(third.Intercept, first.Intercept) > 1e-6 || relErr(third.Slope, first.Slope) > 1e-6 || third.Outliers != first.Outliers {
			t.Errorf("seed %d: shuffling the samples changed the fit:\n%+v\n%+v", seed, first, third)
		}
	}
}

func TestFitLineDoesNotModifySamples(t *testing.T) {
	rng := newRand(1)
	samples := copyTimes(rng, wantLatency, wantBandwidth, 3, 0.01)
	plantOutliers(rng, samples, 0.10)
	before := slices.Clone(samples)
	if _, err := FitLine(samples); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(samples, before) {
		t.Error("FitLine modified its input")
	}
}

func TestFitErrors(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	good := func(x float64) Sample { return Sample{X: x, Y: 1e-6 + x/1e9} }
	tests := []struct {
		name    string
		samples []Sample
		want    []string // substrings of the error, all required
	}{
		{"nil", nil, []string{"at least 2 samples, got 0"}},
		{"one sample", []Sample{good(1)}, []string{"at least 2 samples, got 1"}},
		{"one size", []Sample{good(4096), good(4096), good(4096)}, []string{"2 distinct sizes", "all 3 samples have size 4096"}},
		{"NaN size", []Sample{good(1), {X: nan, Y: 1}}, []string{"sample 1: size NaN is not finite"}},
		{"infinite time", []Sample{good(1), {X: 2, Y: inf}}, []string{"sample 1: time +Inf is not finite"}},
		{"negative size", []Sample{{X: -1, Y: 1}, good(1)}, []string{"sample 0: size -1 is negative"}},
		{"negative time", []Sample{good(1), {X: 2, Y: -1e-6}}, []string{"sample 1: time -1e-06 is negative"}},
		{"zero time", []Sample{good(1), {X: 2, Y: 0}}, []string{"sample 1: time is zero"}},
		{"every problem reported", []Sample{{X: -1, Y: 1}, good(1), {X: 2, Y: nan}}, []string{"sample 0: size -1 is negative", "sample 2: time NaN is not finite"}},
		{"many problems counted", slices.Repeat([]Sample{{X: -1, Y: 0}}, 4), []string{"sample 2: size -1", "and 3 more bad samples"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			line, err := FitLine(tt.samples)
			if err == nil {
				t.Fatalf("FitLine(%v) = %+v, want an error", tt.samples, line)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("FitLine error %q does not contain %q", err, w)
				}
			}
			if _, err := FitLatencyBandwidth(tt.samples); err == nil {
				t.Errorf("FitLatencyBandwidth(%v): want an error", tt.samples)
			}
		})
	}
}

func TestFitLatencyBandwidthRejectsShrinkingTimes(t *testing.T) {
	samples := []Sample{{X: 1e3, Y: 3e-6}, {X: 1e6, Y: 2e-6}, {X: 1e9, Y: 1e-6}}
	line, err := FitLine(samples)
	if err != nil {
		t.Fatalf("FitLine: %v (a falling line is still a line)", err)
	}
	if line.Slope >= 0 {
		t.Errorf("FitLine slope %g, want negative", line.Slope)
	}
	_, err = FitLatencyBandwidth(samples)
	if err == nil || !strings.Contains(err.Error(), "do not grow with size") {
		t.Errorf("FitLatencyBandwidth error = %v, want one saying the times do not grow with size", err)
	}
}

// TestFitLatencyBandwidthSlopeInWords: a falling line's slope is said to 4
// significant digits, not the float's 17 (it lands in the calibrated YAML's
// comments). Three samples on t = 10 us - 1.0856592459863305e-14 s/byte x
// bytes fit it exactly.
func TestFitLatencyBandwidthSlopeInWords(t *testing.T) {
	const slope = -1.0856592459863305e-14
	var samples []Sample
	for _, x := range []float64{1e6, 1e7, 1e8} {
		samples = append(samples, Sample{X: x, Y: 10e-6 + slope*x})
	}
	_, err := FitLatencyBandwidth(samples)
	want := "calibrate: fitted slope -1.086e-14 s/byte is not positive: the times do not grow with size, so they give no bandwidth"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		want Stats
	}{
		// Sorted: 1 2 3 4 100 (n = 5, positions 0..4).
		// Median at h = 0.5·4 = 2: 3.
		// P10 at h = 0.1·4 = 0.4: 1 + 0.4·(2-1) = 1.4.
		// P90 at h = 0.9·4 = 3.6: 4 + 0.6·(100-4) = 61.6.
		// |x - 3| = 2 1 0 1 97, sorted 0 1 1 2 97: MAD 1.
		{"outlier", []float64{100, 3, 1, 4, 2}, Stats{N: 5, Median: 3, Min: 1, Max: 100, P10: 1.4, P90: 61.6, MAD: 1}},
		// Sorted: 1 2 3 4 (positions 0..3).
		// Median at h = 1.5: 2 + 0.5·1 = 2.5.
		// P10 at h = 0.3: 1.3. P90 at h = 2.7: 3.7.
		// |x - 2.5| = 1.5 0.5 0.5 1.5: MAD (0.5+1.5)/2 = 1.
		{"even count", []float64{4, 1, 3, 2}, Stats{N: 4, Median: 2.5, Min: 1, Max: 4, P10: 1.3, P90: 3.7, MAD: 1}},
		{"one value", []float64{7}, Stats{N: 1, Median: 7, Min: 7, Max: 7, P10: 7, P90: 7, MAD: 0}},
		{"empty", nil, Stats{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.in)
			got := Summarize(in)
			if !slices.Equal(in, tt.in) {
				t.Errorf("Summarize modified its input: %v, was %v", in, tt.in)
			}
			if got.N != tt.want.N || !near(got.Median, tt.want.Median) || !near(got.Min, tt.want.Min) ||
				!near(got.Max, tt.want.Max) || !near(got.P10, tt.want.P10) || !near(got.P90, tt.want.P90) ||
				!near(got.MAD, tt.want.MAD) {
				t.Errorf("Summarize(%v)\n got %+v\nwant %+v", tt.in, got, tt.want)
			}
		})
	}
}

func near(got, want float64) bool { return math.Abs(got-want) <= 1e-12*math.Max(1, math.Abs(want)) }

func TestSummarizeNaN(t *testing.T) {
	got := Summarize([]float64{1, math.NaN(), 3})
	if got.N != 3 || !math.IsNaN(got.Median) || !math.IsNaN(got.Min) || !math.IsNaN(got.MAD) {
		t.Errorf("Summarize with a NaN = %+v, want N 3 and NaN elsewhere", got)
	}
}

// Summarize agrees with gonum's empirical quantile where the two
// definitions coincide: at p = 0 and p = 1, and for the median of an odd
// count.
func TestSummarizeAgreesWithGonum(t *testing.T) {
	for _, seed := range seeds {
		rng := newRand(seed)
		xs := make([]float64, 2*rng.IntN(50)+1)
		for i := range xs {
			xs[i] = rng.ExpFloat64()
		}
		got := Summarize(xs)
		s := slices.Sorted(slices.Values(xs))
		if want := stat.Quantile(0.5, stat.Empirical, s, nil); got.Median != want {
			t.Errorf("seed %d: median %g, gonum %g", seed, got.Median, want)
		}
		if got.Min != s[0] || got.Max != s[len(s)-1] {
			t.Errorf("seed %d: min/max %g/%g, want %g/%g", seed, got.Min, got.Max, s[0], s[len(s)-1])
		}
		if !(got.Min <= got.P10 && got.P10 <= got.Median && got.Median <= got.P90 && got.P90 <= got.Max) {
			t.Errorf("seed %d: order statistics out of order: %+v", seed, got)
		}
	}
}

func TestEfficiency(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	tests := []struct {
		name           string
		measured, peak float64
		want           float64
		wantErr        string // "" for no error
	}{
		{"typical", 40e9, 50e9, 0.8, ""},
		{"at peak", 50e9, 50e9, 1, ""},
		{"noise above peak", 51e9, 50e9, 1, ""},
		{"just under 5% above", 52.4e9, 50e9, 1, ""},
		{"peak wrong", 60e9, 50e9, 0, "the peak is wrong"},
		{"just over 5% above", 52.6e9, 50e9, 0, "the peak is wrong"},
		{"zero measured", 0, 50e9, 0, "measured rate 0"},
		{"negative measured", -1, 50e9, 0, "measured rate -1"},
		{"NaN measured", nan, 50e9, 0, "measured rate NaN"},
		{"infinite measured", inf, 50e9, 0, "measured rate +Inf"},
		{"zero peak", 1, 0, 0, "peak rate 0"},
		{"negative peak", 1, -5, 0, "peak rate -5"},
		{"infinite peak", 1, inf, 0, "peak rate +Inf"},
		{"NaN peak", 1, nan, 0, "peak rate NaN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Efficiency(tt.measured, tt.peak)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Efficiency(%g, %g): %v", tt.measured, tt.peak, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("Efficiency(%g, %g) error = %v, want one containing %q", tt.measured, tt.peak, err, tt.wantErr)
			}
			if !near(got, tt.want) {
				t.Errorf("Efficiency(%g, %g) = %g, want %g", tt.measured, tt.peak, got, tt.want)
			}
			if err == nil && !(got > 0 && got <= 1) {
				t.Errorf("Efficiency(%g, %g) = %g, outside (0, 1]", tt.measured, tt.peak, got)
			}
		})
	}
}

func ExampleFitLatencyBandwidth() {
	// Copies of 4 KiB to 1 GiB over a link with 2.5 µs latency and
	// 50 GB/s, one of them disturbed by a context switch.
	var samples []Sample
	for size := 4096.0; size <= 1<<30; size *= 4 {
		samples = append(samples, Sample{X: size, Y: 2.5e-6 + size/50e9})
	}
	samples[3].Y *= 3
	lb, err := FitLatencyBandwidth(samples)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("latency %.3g µs, bandwidth %.3g GB/s, %d of %d samples ignored\n",
		lb.Latency*1e6, lb.Bandwidth/1e9, lb.Outliers, lb.N)
	// Output: latency 2.5 µs, bandwidth 50 GB/s, 1 of 10 samples ignored
}

func BenchmarkFitLine(b *testing.B) {
	rng := newRand(1)
	samples := copyTimes(rng, wantLatency, wantBandwidth, 7, 0.01)
	plantOutliers(rng, samples, 0.10)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := FitLine(samples); err != nil {
			b.Fatal(err)
		}
	}
}

// checkLatencyBandwidth fits samples and checks latency and bandwidth
// against the planted values within the relative tolerance tol; it returns
// the fit.
func checkLatencyBandwidth(t *testing.T, seed uint64, samples []Sample, wantLatency, wantBandwidth, tol float64) LatencyBandwidth {
	t.Helper()
	got, err := FitLatencyBandwidth(samples)
	if err != nil {
		t.Fatalf("seed %d: FitLatencyBandwidth: %v", seed, err)
	}
	if e := relErr(got.Latency, wantLatency); e > tol {
		t.Errorf("seed %d: latency %g s, want %g s within %g%% (off by %.2f%%)", seed, got.Latency, wantLatency, tol*100, e*100)
	}
	if e := relErr(got.Bandwidth, wantBandwidth); e > tol {
		t.Errorf("seed %d: bandwidth %g B/s, want %g B/s within %g%% (off by %.2f%%)", seed, got.Bandwidth, wantBandwidth, tol*100, e*100)
	}
	return got
}

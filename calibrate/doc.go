// Package calibrate measures real CUDA copy, kernel and host timings through
// gpusim/hw and fits the model's parameters.
//
// A calibration run times the same operation many times at many sizes, then
// turns the raw timings into the few numbers a topology file needs: a
// latency and a bandwidth for each kind of copy, an efficiency for each
// kernel against its roofline peak, a per-call host overhead. Each fitted
// number keeps its provenance (what was measured, how many samples, how well
// the model fits them), so a calibrated topology says where its numbers came
// from.
//
// # Statistics
//
// The fitting half of the package is pure: it takes slices of numbers and
// returns values and errors, touching no device, clock or file.
//
//   - [Summarize] reduces repeated timings of one operation to robust order
//     statistics ([Stats]: median, percentiles, median absolute deviation).
//   - [FitLine] fits y = Intercept + Slope*x to (size, time) [Sample]s by
//     iteratively reweighted least squares on relative residuals, so that
//     timings spanning many orders of magnitude count equally and a few wild
//     timings (a context switch, a clock-boost step) are down-weighted to
//     zero instead of dragging the line.
//   - [FitLatencyBandwidth] reads such a line as time = latency +
//     bytes/bandwidth, the model gpusim uses for copies and links.
//   - [Efficiency] compares a measured rate with a preset's peak and rejects
//     a peak the hardware beats by more than measurement noise.
//
// A typical use, after timing copies at log-spaced sizes:
//
//	var samples []calibrate.Sample
//	for _, m := range measurements {
//		samples = append(samples, calibrate.Sample{X: m.Bytes, Y: m.Seconds})
//	}
//	lb, err := calibrate.FitLatencyBandwidth(samples)
//	if err != nil {
//		return err
//	}
//	fmt.Printf("latency %.2f µs, bandwidth %.1f GB/s (%d outliers, residual %.2f%%)\n",
//		lb.Latency*1e6, lb.Bandwidth/1e9, lb.Outliers, lb.Residual*100)
package calibrate

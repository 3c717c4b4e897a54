package hw

import (
	"fmt"
	"math"
	"sort"
)

// Event times far from the reference event lose precision: cuEventElapsedTime
// returns float32 milliseconds, whose step is about 1 us past 8 s after the
// reference and 4 us past 32 s. The driver's timestamps themselves are finer
// (its resolution is about half a microsecond), and the elapsed time between
// two events close together is a small float32, exact to nanoseconds.
// refineEventTimes uses that.

// chainFrom is how far from the reference (ms) an event must be before the
// times are refined: below it a float32 millisecond is finer than 62 ns.
const chainFrom = 1000.0

// maxLink is the longest elapsed time (ms) a chain links across: its
// float32 is exact to 8 ns. Events further apart start a new chain.
const maxLink = 100.0

// step is the float32 step at c (ms) away from zero, the larger of the two
// around c, so that an interval of steps on each side covers both.
func step(c float64) float64 {
	c32 := float32(math.Abs(c))
	return float64(math.Nextafter32(c32, float32(math.Inf(1))) - c32)
}

// slack is how many steps from the truth a coarse time may be: half a step
// where the driver rounds once, correctly; a driver that computes in
// float32, (float)ns / 1e6f, rounds twice and was seen 1.005 steps off.
const slack = 1.5

// refineEventTimes takes coarse[i], event i's time after the reference in
// milliseconds (a float32 from cuEventElapsedTime), and elapsed(i, j), the
// milliseconds from event i to event j, and returns the events' times.
//
// Where some event is past chainFrom, it puts the events in the order of
// their coarse times and chains each to the one before by the elapsed time
// between them (unless that is over maxLink: a new chain starts). That fixes
// every event of a chain relative to its first, up to the float32 rounding
// of each link, which can add up the same way in a loop of equal ops (a
// drift in proportion to time). So a weighted least squares fit of the
// chain's coarse times to first + rate x (time along the chain) gives the
// rate, each coarse time weighted by its precision (an early event's float32
// is nanoseconds wide, a late one's microseconds). Then each coarse time says
// the chain's first event is within slack float32 steps of a point, give or
// take the links' rounding, and the chain is placed at the middle of where
// all of them agree. A time that lands further than that from its coarse
// time is brought back to that edge.
//
// Where the coarse times do not agree (the chain drifts otherwise) it
// returns the coarse times and ok false; where an elapsed call fails, the
// coarse times and the error. Every time returned is within slack steps of
// its coarse time. Times that are not finite are never refined.
func refineEventTimes(coarse []float64, elapsed func(i, j int) (float64, error)) (times []float64, ok bool, err error) {
	times = append([]float64(nil), coarse...)
	far := false
	for _, c := range coarse {
		if math.IsNaN(c) || math.IsInf(c, 0) {
			return times, false, nil
		}
		far = far || c > chainFrom
	}
	if !far {
		return times, true, nil
	}
	order := make([]int, len(coarse))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return coarse[order[a]] < coarse[order[b]] })
	refined := make([]float64, len(coarse))
	for start := 0; start < len(order); {
		end := start + 1
		for end < len(order) && coarse[order[end]]-coarse[order[end-1]] <= maxLink {
			end++
		}
		// delta: an event's time along the chain from its first; drift:
		// how far the links' float32 rounding may have moved it, at most
		// (two roundings of a link, each 2^-24 of it).
		delta := make([]float64, end-start)
		drift := make([]float64, end-start)
		for k := start + 1; k < end; k++ {
			d, err := elapsed(order[k-1], order[k])
			if err != nil {
				return times, false, err
			}
			if math.IsNaN(d) || math.IsInf(d, 0) {
				return times, false, fmt.Errorf("an elapsed time of %v ms", d)
			}
			delta[k-start] = delta[k-start-1] + d
			drift[k-start] = drift[k-start-1] + math.Abs(d)*0x1p-23
		}
		// The rate: coarse ~ first + rate*delta, weighted by 1/step^2
		// (centred on the weighted means, for a well-conditioned fit).
		weight := func(k int) float64 { return 1 / math.Pow(math.Max(step(coarse[order[k]]), 1e-12), 2) }
		var sw, sx, sy float64
		for k := start; k < end; k++ {
			w := weight(k)
			sw += w
			sx += w * delta[k-start]
			sy += w * coarse[order[k]]
		}
		mx, my := sx/sw, sy/sw
		var sxx, sxy float64
		for k := start; k < end; k++ {
			w := weight(k)
			dx := delta[k-start] - mx
			sxx += w * dx * dx
			sxy += w * dx * (coarse[order[k]] - my)
		}
		rate := 1.0
		// Rounding drifts by at most 2^-23 of the time: a rate further from
		// 1, or one the chain is too short to tell, is not taken.
		if sxx > 0 {
			if r := sxy / sxx; math.Abs(r-1) <= 0x1p-23 {
				rate = r
			}
		}
		// Where the chain's first event is: each coarse time says within
		// slack steps (and the drift) of coarse - rate*delta.
		lo, hi := math.Inf(-1), math.Inf(1)
		for k := start; k < end; k++ {
			j := order[k]
			at := coarse[j] - rate*delta[k-start]
			lo = math.Max(lo, at-slack*step(coarse[j])-drift[k-start]-1e-12)
			hi = math.Min(hi, at+slack*step(coarse[j])+drift[k-start]+1e-12)
		}
		if !(lo <= hi) {
			return times, false, nil
		}
		for k := start; k < end; k++ {
			j := order[k]
			s := slack * step(coarse[j])
			refined[j] = min(max((lo+hi)/2+rate*delta[k-start], coarse[j]-s), coarse[j]+s)
		}
		start = end
	}
	return refined, true, nil
}

package hw

import (
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
// float32 is exact to 4 ns. Events further apart start a new chain.
const maxLink = 100.0

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
// the chain's first event is within half its float32 step (the rounding that
// made it) of a point, give or take the links' rounding, and the chain is
// placed at the middle of where all of them agree; a time that lands outside
// its own coarse time's half step is brought back to its edge, since the
// truth is inside. Where the coarse times do not agree (the chain drifts
// otherwise), or an elapsed call fails, it returns the coarse times and ok
// false. Every time returned is within half a step of its coarse time: never
// worse than it.
func refineEventTimes(coarse []float64, elapsed func(i, j int) (float64, error)) (times []float64, ok bool) {
	times = append([]float64(nil), coarse...)
	far := false
	for _, c := range coarse {
		far = far || c > chainFrom
	}
	if !far {
		return times, true
	}
	order := make([]int, len(coarse))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return coarse[order[a]] < coarse[order[b]] })
	half := func(c float64) float64 {
		return (float64(math.Nextafter32(float32(c), float32(math.Inf(1)))) - c) / 2
	}
	refined := make([]float64, len(coarse))
	for start := 0; start < len(order); {
		end := start + 1
		for end < len(order) && coarse[order[end]]-coarse[order[end-1]] <= maxLink {
			end++
		}
		// delta: an event's time along the chain from its first; drift:
		// how far the links' float32 rounding may have moved it, at most.
		delta := make([]float64, end-start)
		drift := make([]float64, end-start)
		for k := start + 1; k < end; k++ {
			d, err := elapsed(order[k-1], order[k])
			if err != nil {
				return times, false
			}
			delta[k-start] = delta[k-start-1] + d
			drift[k-start] = drift[k-start-1] + math.Abs(d)*0x1p-24
		}
		// The rate: coarse ~ first + rate*delta, weighted by 1/half^2
		// (centred on the weighted means, for a well-conditioned fit).
		var sw, sx, sy float64
		for k := start; k < end; k++ {
			w := 1 / math.Pow(math.Max(half(coarse[order[k]]), 1e-9), 2)
			sw += w
			sx += w * delta[k-start]
			sy += w * coarse[order[k]]
		}
		mx, my := sx/sw, sy/sw
		var sxx, sxy float64
		for k := start; k < end; k++ {
			w := 1 / math.Pow(math.Max(half(coarse[order[k]]), 1e-9), 2)
			dx := delta[k-start] - mx
			sxx += w * dx * dx
			sxy += w * dx * (coarse[order[k]] - my)
		}
		rate := 1.0
		// Rounding drifts by at most 2^-24 of the time: a rate further from
		// 1, or one the chain is too short to tell, is not taken.
		if sxx > 0 {
			if r := sxy / sxx; math.Abs(r-1) <= 0x1p-23 {
				rate = r
			}
		}
		// Where the chain's first event is: each coarse time says within
		// half its step of coarse - rate*delta; all of them at once, within
		// the intersection, whose middle is taken.
		lo, hi := math.Inf(-1), math.Inf(1)
		for k := start; k < end; k++ {
			j := order[k]
			at := coarse[j] - rate*delta[k-start]
			lo = math.Max(lo, at-half(coarse[j])-drift[k-start]-1e-12)
			hi = math.Min(hi, at+half(coarse[j])+drift[k-start]+1e-12)
		}
		if lo > hi {
			return times, false
		}
		// The truth is within half a step of each coarse time: a time placed
		// outside (by the drift allowed for) is brought back to the edge.
		for k := start; k < end; k++ {
			j := order[k]
			refined[j] = min(max((lo+hi)/2+rate*delta[k-start], coarse[j]-half(coarse[j])), coarse[j]+half(coarse[j]))
		}
		start = end
	}
	return refined, true
}

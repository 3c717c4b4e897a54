package sim

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortRunsMatchesStableSort checks sortRuns against the standard library's
// stable sort of the whole slice, on random runs (most sorted, some not)
// with many equal keys, where stability shows.
func TestSortRunsMatchesStableSort(t *testing.T) {
	type item struct{ key, tag int }
	byKey := func(a, b item) int { return cmp.Compare(a.key, b.key) }
	r := rand.New(rand.NewPCG(7, 7))
	for c := 0; c < 2000; c++ {
		var xs []item
		var ends []int
		for k := r.IntN(7); k >= 0; k-- {
			n := r.IntN(12)
			from := len(xs)
			for i := 0; i < n; i++ {
				xs = append(xs, item{r.IntN(6), len(xs)})
			}
			if r.IntN(5) > 0 { // most runs sorted, as a stream's times are
				slices.SortStableFunc(xs[from:], byKey)
			}
			ends = append(ends, len(xs))
		}
		want := slices.Clone(xs)
		slices.SortStableFunc(want, byKey)
		got := sortRuns(slices.Clone(xs), slices.Clone(ends), make([]item, r.IntN(2*len(xs)+1)), byKey)
		if !slices.Equal(got, want) {
			t.Fatalf("case %d: runs %v ending at %v: got %v, want %v", c, xs, ends, got, want)
		}
	}
}

// TestSortTimeRunsMatchesSort does the same for the times' version.
func TestSortTimeRunsMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	for c := 0; c < 2000; c++ {
		var xs []Time
		var ends []int
		for k := r.IntN(9); k >= 0; k-- {
			from := len(xs)
			for i := r.IntN(12); i > 0; i-- {
				xs = append(xs, Time(r.IntN(20)))
			}
			if r.IntN(5) > 0 {
				slices.Sort(xs[from:])
			}
			ends = append(ends, len(xs))
		}
		want := slices.Clone(xs)
		slices.Sort(want)
		got := sortTimeRuns(slices.Clone(xs), slices.Clone(ends), make([]Time, r.IntN(2*len(xs)+1)))
		if !slices.Equal(got, want) {
			t.Fatalf("case %d: runs %v ending at %v: got %v, want %v", c, xs, ends, got, want)
		}
	}
}

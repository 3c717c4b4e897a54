package plots

import "testing"

func TestNameRuns(t *testing.T) {
	gpus := []string{"gpu0", "gpu1", "gpu2", "gpu3", "gpu4", "gpu5", "gpu6", "gpu7"}
	odd := []string{"left", "mid", "right", "a-1", "a-2", "a-3"}
	for _, c := range []struct {
		names []string
		idx   []int
		want  string
	}{
		{gpus, []int{0, 1, 2, 3, 4, 5, 6, 7}, "gpu0-gpu7"},
		{gpus, []int{0, 1, 2, 3, 6}, "gpu0-gpu3, gpu6"},
		{gpus, []int{2, 3}, "gpu2, gpu3"},
		{gpus, []int{2}, "gpu2"},
		{odd, []int{0, 1, 2}, "left to right"},
		{odd, []int{3, 4, 5}, "a-1 to a-3"}, // a prefix with a dash would read "a-1-a-3"
	} {
		if got := nameRuns(c.names, c.idx); got != c.want {
			t.Errorf("nameRuns(%v, %v) = %q, want %q", c.names, c.idx, got, c.want)
		}
	}
}

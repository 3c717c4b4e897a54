package plots

import (
	"reflect"
	"testing"
)

// A load curve is dashed when it covers, with later curves, every loaded
// bin of a curve drawn before it; not when each earlier curve shows
// somewhere.
func TestHidersDashWhatCoversACurveEverywhere(t *testing.T) {
	for _, tc := range []struct {
		name  string
		loads [][]float64
		want  []bool
	}{
		{"the same load", [][]float64{{1, 1, 0}, {1, 1, 0}}, []bool{false, true}},
		{"within 1%", [][]float64{{0.5, 0}, {0.505, 0}}, []bool{false, true}},
		{"the first shows where they differ", [][]float64{{1, 0.5}, {1, 1}}, []bool{false, false}},
		{"covered by two later ones", [][]float64{{1, 0.5, 0}, {1, 0, 0}, {0, 0.5, 0}}, []bool{false, true, true}},
		{"a later one covers nothing of it", [][]float64{{1, 0.5, 0}, {1, 0, 0}, {0, 0.5, 0}, {0, 0, 0.7}}, []bool{false, true, true, false}},
		{"idle links are not hidden", [][]float64{{0, 0}, {0, 0}}, []bool{false, false}},
	} {
		if got := hiders(tc.loads); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: dashed %v, want %v", tc.name, got, tc.want)
		}
	}
}

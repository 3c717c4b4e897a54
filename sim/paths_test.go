package sim_test

import (
	"reflect"
	"testing"

	"gpusim/topologies"
)

// Paths, which keeps each source's searches, answers every pair of every
// shipped topology as the Machine's own searches for that pair do.
func TestPathsAnswerAsTheMachine(t *testing.T) {
	for _, name := range topologies.Shipped() {
		tp, err := topologies.LoadShipped(name)
		if err != nil {
			t.Fatal(err)
		}
		m := tp.Machine
		paths := m.NewPaths()
		for a := range m.GPUs {
			for b := range m.GPUs {
				if got, want := paths.PathBetween(a, b), m.PathBetween(a, b); !reflect.DeepEqual(got, want) {
					t.Errorf("%s: PathBetween(%d, %d) = %+v, want %+v", name, a, b, got, want)
				}
				if got, want := paths.StagedPath(a, b), m.StagedPath(a, b); !reflect.DeepEqual(got, want) {
					t.Errorf("%s: StagedPath(%d, %d) = %+v, want %+v", name, a, b, got, want)
				}
				if got, want := paths.CollectivePath(a, b), m.CollectivePath(a, b); !reflect.DeepEqual(got, want) {
					t.Errorf("%s: CollectivePath(%d, %d) = %+v, want %+v", name, a, b, got, want)
				}
			}
			h := m.Hosts[m.GPUs[a].Host].Node
			got, ok1 := paths.Route(h, m.GPUs[a].Node)
			want, ok2 := m.Route(h, m.GPUs[a].Node)
			if ok1 != ok2 || !reflect.DeepEqual(got, want) {
				t.Errorf("%s: Route(host, GPU %d) = %+v, want %+v", name, a, got, want)
			}
		}
	}
}

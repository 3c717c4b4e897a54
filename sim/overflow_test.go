package sim_test

import (
	"errors"
	"strings"
	"testing"

	"gpusim/sim"
)

// TestOverflowNamesTheOp: a run that would pass the simulated time range
// (about 106 days) stops with an error that names the op at fault, its
// position, and for a transfer what it moves over.
func TestOverflowNamesTheOp(t *testing.T) {
	slowGPU0 := strings.Replace(twoGPUs, "{ends: [gpu0, sw0], bandwidth: 10 GB/s}", "{ends: [gpu0, sw0], bandwidth: 1 kB/s}", 1)
	oneCore := strings.Replace(twoGPUs, bareHost, strings.Replace(bareHost, "{name: cpu0,", "{name: cpu0, cores: 1,", 1), 1)
	for _, tc := range []struct {
		name, topo, scen string
		where            string // the op's position
		want             []string
	}{
		{
			// Each kernel's 1300 h fits, but on two streams they share
			// the SMs: at half speed the first would end after 2600 h.
			name: "kernels sharing the SMs", topo: twoGPUs, scen: `
name: k
threads:
  - name: main
    ops:
      - kernel: {stream: gpu0/c, duration: 1300 h}
      - kernel: {stream: gpu0/d, duration: 1300 h}
`,
			where: "scen.yaml:7:17",
			want: []string{"op main/0 (kernel) would end 9.36e+06 s after 0 ps", "running at 0.5 of its speed, sharing the SMs of gpu0",
				"a duration or size is too large"},
		},
		{
			// 1 TiB at 1 kB/s: 1.1e9 s.
			name: "copy over a slow link", topo: slowGPU0, scen: `
name: c
threads:
  - name: main
    ops:
      - host: {duration: 1 us}
      - copy: {id: up, from: cpu0, to: gpu0, bytes: 1 TiB, stream: gpu0/c}
`,
			where: "scen.yaml:8:15",
			want: []string{"op up (copy) would end 1.1e+09 s after 1 us", "moving at 1 kB/s, over link:gpu0-sw0 sw0->gpu0 (1 kB/s)",
				"or a bandwidth too small"},
		},
		{
			// The ring's transfers from gpu0, half the bytes each (2^39 B),
			// cross the 1 kB/s link: 5.5e8 s.
			name: "collective over a slow link", topo: slowGPU0, scen: `
name: a
threads:
  - name: main
    ops:
      - allreduce: {id: ar, gpus: [gpu0, gpu1], bytes: 1 TiB, stream: comm}
`,
			where: "scen.yaml:7:20",
			want:  []string{"op ar (allreduce), its transfer gpu0 -> gpu1, would end 5.5e+08 s", "over link:gpu0-sw0 gpu0->sw0 (1 kB/s)"},
		},
		{
			// Each host op's 60 days fits, but two threads share one core:
			// at half speed the first would end after 120 days.
			name: "host work sharing a core", topo: oneCore, scen: `
name: h
threads:
  - name: a
    ops:
      - host: {id: work, duration: 1440 h}
  - name: b
    ops:
      - host: {duration: 1440 h}
`,
			where: "scen.yaml:7:15",
			want:  []string{"op work (host) would end 1.04e+07 s after 0 ps"},
		},
	} {
		_, err := simulateErr(t, tc.topo, tc.scen) // line 1 is the topology:
		var oe *sim.OverflowError
		if !errors.As(err, &oe) {
			t.Errorf("%s: err = %v, want a time overflow", tc.name, err)
			continue
		}
		if oe.Where != tc.where || !strings.HasPrefix(err.Error(), tc.where+": simulated time overflows its range (at most 106 days): ") {
			t.Errorf("%s: %q, want it at %s", tc.name, err, tc.where)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", tc.name, err, w)
			}
		}
	}
}

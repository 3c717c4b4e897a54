package main

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzSweepFile feeds what sweep merge and --resume read back (CSV and
// JSON tables) to the parsers, the row checks, the layout fit and the
// writers: nothing in such a file may panic or hang; a table that reads
// writes again.
func FuzzSweepFile(f *testing.F) {
	f.Add([]byte("# gpusim sweep x: complete, 2 of 2 points\npoint,a,makespan_s,idle_mean,idle_max,idle_per_gpu,busiest_link,busiest_link_util,bottleneck,error,samples_per_s,tokens_per_s,mfu\n0,1,0.5,0.1,0.2,gpu0=0.1 gpu1=0.2,l,0.3,compute-bound,,10,20480,0.4\n1,2,1,0,0,gpu0=0,,0,,,,,\n"))
	f.Add([]byte("# gpusim sweep x: partial, 1 of 4 points shard 1/2, --set {\"b\":\"3\"}\npoint,a,b,makespan_s,idle_mean,idle_max,idle_per_gpu,busiest_link,busiest_link_util,bottleneck,error\n1,x,3,1,0,0,gpu0=0,,0,,\n"))
	f.Add([]byte(`{"scenario": "x", "vars": ["a"], "points_total": 2, "partial": false, "rows": [{"point": 0, "values": ["1"], "makespan_s": 1, "idle_mean": 0, "idle_max": 0, "idle_per_gpu": [{"gpu": "gpu0", "idle": 0}], "busiest_link": "", "busiest_link_util": 0, "bottleneck": "", "tokens_per_s": 5, "mfu": 0.5}]}`))
	f.Add([]byte("# gpusim sweep x: complete, 1 of 1 points\npoint,a,makespan_s,idle_mean,idle_max,idle_per_gpu,busiest_link,busiest_link_util,bottleneck,error,samples_per_s,tokens_per_s,mfu,compute_mean,topology,warnings\n0,1,0.5,0.1,0.2,gpu0=0.1,l,0.3,compute-bound,,,,,0.75,dgx-h100,\"w1\nw2, too\"\n"))
	f.Add([]byte("# gpusim sweep x: complete, 2 of 2 points\npoint,a,makespan_s,idle_mean,idle_max,idle_per_gpu,busiest_link,busiest_link_util,bottleneck,error,samples_per_s,tokens_per_s,mfu,compute_mean,topology,warnings,first_token_s,per_token_s\n0,1,0.5,0.1,0.2,gpu0=0.1,l,0.3,compute-bound,,4,512,,0.75,dgx-h100,,0.01,0.002\n1,3,0.6,0.1,0.2,gpu0=0.1,l,0.3,compute-bound,,4,512,,0.75,dgx-h100,,0.01,\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var tab *sweepTable
		var err error
		if b := bytes.TrimSpace(data); len(b) > 0 && b[0] == '{' {
			tab, err = parseSweepJSON("f", data)
		} else {
			tab, err = parseSweepCSV("f", data)
		}
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("a message of several lines: %q", err)
			}
			return
		}
		if checkSweepRows(tab) != nil {
			return
		}
		_ = checkLayout(tab, tab.Rows)
		var out bytes.Buffer
		if err := writeSweepCSV(&out, tab); err != nil {
			t.Fatal(err)
		}
		// The CSV it writes reads back to a table that writes it again.
		again, err := parseSweepCSV("g", out.Bytes())
		if err != nil {
			t.Fatalf("the CSV written does not read: %v\n%s", err, out.Bytes())
		}
		var out2 bytes.Buffer
		if err := writeSweepCSV(&out2, again); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), out2.Bytes()) {
			t.Fatalf("the CSV written reads back to another:\n%s\n%s", out.Bytes(), out2.Bytes())
		}
		writeSweepText(&out, tab)
		if err := writeSweepJSON(&out, tab); err != nil {
			t.Fatal(err)
		}
	})
}

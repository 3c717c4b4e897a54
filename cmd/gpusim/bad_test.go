package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

var posRe = regexp.MustCompile(`[\w./-]+\.yaml:\d+:\d+: `)

// TestBadInput runs every file of testdata/bad (topologies t-*, validated;
// scenarios s-*, run) and checks that gpusim exits with status 2, prints
// exactly the golden message of NAME.err, names a file position on every
// line that comes from a file, and never panics. A "# args:" first line adds
// flags.
func TestBadInput(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		base := filepath.Base(f)
		if !strings.HasPrefix(base, "t-") && !strings.HasPrefix(base, "s-") {
			continue
		}
		n++
		t.Run(strings.TrimSuffix(base, ".yaml"), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"run", f}
			if strings.HasPrefix(base, "t-") {
				args = []string{"validate", f}
			}
			if first, _, _ := strings.Cut(string(data), "\n"); strings.HasPrefix(first, "# args:") {
				args = append(args, strings.Fields(strings.TrimPrefix(first, "# args:"))...)
			}
			var out, errb bytes.Buffer
			code := run(args, &out, &errb)
			if code != exitInput {
				t.Errorf("exit status %d, want %d; stderr:\n%s", code, exitInput, errb.String())
			}
			got := errb.String()
			golden := strings.TrimSuffix(f, ".yaml") + ".err"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("no golden file (run go test -update): %v", err)
			}
			if got != string(want) {
				t.Errorf("stderr:\n%s\nwant:\n%s", got, want)
			}
			for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
				if !posRe.MatchString(line) && !strings.Contains(line, "--set") && !strings.Contains(line, "--strict") {
					t.Errorf("line %q names no file:line:col", line)
				}
			}
		})
	}
	if n < 40 {
		t.Errorf("only %d bad inputs in testdata/bad", n)
	}
}

// TestBadInputHuge feeds a 50 MB scenario (a million kernels listed one by
// one) to every command that reads one, directly and as a scenario's
// topology: each refuses it at once, naming the file and the limit, with
// status 2, rather than spending minutes and gigabytes on it.
func TestBadInputHuge(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	line := "      - kernel: {stream: gpu0/s, duration: 1 us}\n"
	body := "name: big\ntopology: pcie-2gpu\nthreads:\n  - name: main\n    host: cpu0\n    ops:\n" + strings.Repeat(line, 49_999_000/len(line))
	if err := os.WriteFile(big, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%s:1:1: the file is 47.7 MiB (%d bytes); gpusim reads topologies and scenarios up to 16 MiB: write long programs with repeat: blocks or a generator (training:, pipeline:)\n", big, len(body))
	if len(body) < 49_999_000 || len(body) > 50_000_000 {
		t.Fatalf("the file is %d bytes, want just under 50 MB (47.7 MiB)", len(body))
	}
	for _, args := range [][]string{{"run", big}, {"validate", big}, {"sweep", big}, {"topo", "show", big}, {"nccl-tests", "--topology", big}} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != exitInput || errb.String() != want {
			t.Errorf("gpusim %s: exit %d, stderr %q; want %d, %q", args[0], code, errb.String(), exitInput, want)
		}
	}
	scen := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(scen, []byte("name: s\ntopology: big.yaml\nthreads: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"run", scen}, &out, &errb); code != exitInput || !strings.HasPrefix(errb.String(), scen+":2:11: topology: ") || !strings.Contains(errb.String(), "up to 16 MiB") {
		t.Errorf("a scenario naming it as topology: exit %d, stderr %q", code, errb.String())
	}
}

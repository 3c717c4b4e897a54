package main

import (
	"bytes"
	"flag"
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

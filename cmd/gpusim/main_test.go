package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"gpusim": func() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the command transcripts in testdata/script.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{Dir: "testdata/script"})
}

// TestDeterminism runs a shipped scenario with GOMAXPROCS 1 and 4, twice
// each, and requires the same bytes of --json and --trace every time.
func TestDeterminism(t *testing.T) {
	dir := t.TempDir()
	scen := filepath.Join("..", "..", "scenarios", "quickstart.yaml")
	var firstJSON, firstTrace []byte
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for i, procs := range []int{1, 4, 1, 4} {
		runtime.GOMAXPROCS(procs)
		trace := filepath.Join(dir, "trace.json")
		var out, errb bytes.Buffer
		if code := run([]string{"run", scen, "--json", "--trace", trace}, &out, &errb); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		tr, err := os.ReadFile(trace)
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(out.Bytes()) || !json.Valid(tr) {
			t.Fatalf("run %d: output is not valid JSON", i)
		}
		if i == 0 {
			firstJSON, firstTrace = out.Bytes(), tr
			continue
		}
		if !bytes.Equal(out.Bytes(), firstJSON) {
			t.Errorf("run %d (GOMAXPROCS %d): --json differs from the first run", i, procs)
		}
		if !bytes.Equal(tr, firstTrace) {
			t.Errorf("run %d (GOMAXPROCS %d): --trace differs from the first run", i, procs)
		}
	}
}

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"gpusim/hw"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"gpusim": func() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) },
		// gpusim on a fake GPU (hw.NewFake with fakeGPU's numbers), for
		// the transcripts of run --backend hw, replay and calibrate.
		"gpusim-fakegpu": func() {
			openDriver = func() (hw.Driver, error) { return hw.NewFake(fakeGPU()), nil }
			os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
		},
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

// TestReadmeQuickstart keeps the README's sample output true: every line it
// shows (other than "...") appears, in order, in what the quick start prints.
func TestReadmeQuickstart(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := bytes.Cut(readme, []byte("and prints:\n"))
	if !ok {
		t.Fatal(`README has no "and prints:" block`)
	}
	block, _, _ := bytes.Cut(after, []byte("\n## "))
	var out, errb bytes.Buffer
	if code := run([]string{"run", filepath.Join("..", "..", "scenarios", "quickstart.yaml")}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	got := strings.Split(out.String(), "\n")
	i := 0
	for _, line := range strings.Split(string(block), "\n") {
		if strings.TrimSpace(line) != "" && !strings.HasPrefix(line, "    ") {
			break // the end of the indented sample
		}
		line = strings.TrimPrefix(line, "    ")
		if strings.TrimSpace(line) == "" || strings.TrimSpace(line) == "..." {
			continue
		}
		for i < len(got) && got[i] != line {
			i++
		}
		if i == len(got) {
			t.Errorf("README line %q is not in the quick start's output (in order)", line)
			return
		}
	}
}

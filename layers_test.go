package gpusim_test

import (
	"go/build"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// allowed lists, for each package, the module packages it may import
// (STYLE.md: data flows one way; the core touches no files, clocks or
// goroutines).
var allowed = map[string][]string{
	"sim":            {},
	"models":         {"sim"},
	"internal/units": {},
	"internal/spec":  {"internal/units", "sim"},
	"topologies":     {"sim", "models", "internal/spec", "internal/units"},
	"scenarios":      {"sim", "models", "topologies", "internal/spec", "internal/units"},
	"mirror":         {"sim", "models", "topologies"},
	"plots":          {"sim"},
	"hw":             {"sim", "models", "topologies", "hw/kernels"},
	"hw/kernels":     {},
	"hw/discover":    {"sim", "models", "topologies"},
	"calibrate":      {"hw", "hw/kernels", "sim", "models", "topologies"},
	// For tests of hw and calibrate: builds the C stand-in for libcuda.
	"internal/fakecuda": {},
	"cmd/gpusim":        {"*"},
}

// pure packages may not import these standard packages.
var pure = []string{"sim", "models", "internal/units", "internal/spec", "topologies", "scenarios", "mirror", "plots"}
var impure = []string{"os", "os/exec", "time", "net", "net/http", "math/rand", "math/rand/v2", "sync", "syscall", "unsafe"}

func TestLayers(t *testing.T) {
	const mod = "gpusim"
	seen := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata") {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(path, 0)
		if err != nil {
			if _, ok := err.(*build.NoGoError); ok {
				return nil
			}
			return err
		}
		rel := filepath.ToSlash(path)
		if rel == "." {
			return nil
		}
		seen[rel] = true
		ok, known := allowed[rel]
		if !known {
			t.Errorf("package %s has no entry in layers_test.go: say what it may import", rel)
			return nil
		}
		for _, imp := range pkg.Imports {
			if strings.HasPrefix(imp, mod+"/") {
				dep := strings.TrimPrefix(imp, mod+"/")
				if !contains(ok, dep) && !contains(ok, "*") {
					t.Errorf("%s imports %s, which it may not (allowed: %v)", rel, dep, ok)
				}
			}
			if contains(pure, rel) && contains(impure, imp) {
				t.Errorf("%s imports %s: the core reads no files, clocks or randomness and starts no goroutines", rel, imp)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p := range allowed {
		if !seen[p] {
			t.Errorf("layers_test.go lists %s, which does not exist", p)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

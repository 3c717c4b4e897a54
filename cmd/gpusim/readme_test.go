package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readmeImages are the README's pictures (in docs/img) and the commands
// that draw them from shipped scenarios and topologies; DIR is a scratch
// directory and OUT the file the command writes there.
var readmeImages = []struct {
	name string
	args []string
	out  string
}{
	{"quickstart-timeline.png", []string{"run", "quickstart", "--plot", "DIR"}, "timeline.png"},
	{"quickstart-utilization.png", []string{"run", "quickstart", "--plot", "DIR"}, "utilization.png"},
	{"dataloader-workers-sweep.png", []string{"sweep", "dataloader-workers", "--plot", "DIR"}, "sweep.png"},
	{"allreduce-overlap-sweep.png", []string{"sweep", "allreduce-overlap", "--plot", "DIR"}, "sweep.png"},
	{"dgx1-v100-peers.png", []string{"topo", "plot", "dgx1-v100", "-o", "DIR/peers.png"}, "peers.png"},
	{"dgx-h100-all-reduce.png", []string{"nccl-tests", "--topology", "dgx-h100", "-b", "8", "-e", "8G", "-f", "2", "--plot", "DIR/nccl.png"}, "nccl.png"},
}

// TestReadmeImages draws the README's pictures and requires the bytes in
// docs/img, so that they show what the code draws today: regenerate them
// with
//
//	go test ./cmd/gpusim -run TestReadmeImages -update
//
// Sweeps run with -j 1 and -j 2: the picture is the same either way.
func TestReadmeImages(t *testing.T) {
	if testing.Short() {
		t.Skip("draws every README picture")
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, im := range readmeImages {
		t.Run(im.name, func(t *testing.T) {
			var got []byte
			for _, j := range []string{"1", "2"} {
				dir := t.TempDir()
				args := make([]string, len(im.args))
				for i, a := range im.args {
					args[i] = strings.ReplaceAll(a, "DIR", dir)
				}
				if args[0] == "sweep" {
					args = append(args, "-j", j)
				} else if j == "2" {
					continue
				}
				var stderr bytes.Buffer
				if code := run(args, io.Discard, &stderr); code != 0 {
					t.Fatalf("gpusim %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
				}
				b, err := os.ReadFile(filepath.Join(dir, im.out))
				if err != nil {
					t.Fatal(err)
				}
				if got != nil && !bytes.Equal(got, b) {
					t.Fatalf("-j 1 and -j 2 draw different pictures")
				}
				got = b
			}
			path := filepath.Join("..", "..", "docs", "img", im.name)
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./cmd/gpusim -run TestReadmeImages -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("docs/img/%s differs from what gpusim %s draws now: run go test ./cmd/gpusim -run TestReadmeImages -update and look at it", im.name, strings.Join(im.args, " "))
			}
			if !bytes.Contains(readme, []byte("docs/img/"+im.name)) {
				t.Errorf("README.md does not show docs/img/%s", im.name)
			}
		})
	}
}

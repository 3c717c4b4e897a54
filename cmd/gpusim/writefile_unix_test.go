//go:build unix

package main

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWriteReplacesOnlyRegularFiles: an output is written through a
// temporary file renamed over the path only where the path is a regular
// file (or nothing); a link keeps being a link, to its written target; a
// FIFO or a device is written in place, never replaced by a file (as root,
// gpusim run --trace /dev/stdout once turned /dev/stdout into a file; a
// FIFO stands for devices here, so that a regression cannot harm the
// machine that runs the test).
func TestWriteReplacesOnlyRegularFiles(t *testing.T) {
	dir := t.TempDir()
	put := func(name, text string) {
		t.Helper()
		if err := writeFileAtomic(name, func(w io.Writer) error { _, err := io.WriteString(w, text); return err }); err != nil {
			t.Fatalf("writing %s: %v", name, err)
		}
	}
	read := func(name string) string {
		b, _ := os.ReadFile(name)
		return string(b)
	}

	target, link := filepath.Join(dir, "target.json"), filepath.Join(dir, "link.json")
	os.WriteFile(target, []byte("old"), 0o644)
	if err := os.Symlink("target.json", link); err != nil {
		t.Fatal(err)
	}
	put(link, "new")
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("%s is no longer a link: %v", link, err)
	}
	if got := read(target); got != "new" {
		t.Errorf("the link's target holds %q, want %q", got, "new")
	}

	// A link to a file not there yet: the file is made, the link kept.
	dangling := filepath.Join(dir, "dangling.json")
	os.Symlink("later.json", dangling)
	put(dangling, "made")
	if st, err := os.Lstat(dangling); err != nil || st.Mode()&os.ModeSymlink == 0 || read(filepath.Join(dir, "later.json")) != "made" {
		t.Errorf("a link to a missing file: link %v, target %q", err, read(filepath.Join(dir, "later.json")))
	}

	fifo := filepath.Join(dir, "pipe.dot")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	got := make(chan string)
	go func() { got <- read(fifo) }()
	put(fifo, "through the pipe")
	if s := <-got; s != "through the pipe" {
		t.Errorf("the FIFO's reader got %q", s)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("%s is no longer a FIFO: %v", fifo, err)
	}

	// A regular file is still replaced whole, through a temporary file:
	// nothing else is left in the folder.
	plain := filepath.Join(dir, "plain.csv")
	put(plain, "first, longer")
	put(plain, "second")
	if got := read(plain); got != "second" {
		t.Errorf("%s holds %q", plain, got)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 6 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("the folder holds %v, want the 6 files made here", names)
	}
}

// TestWriteToTheFileStdoutGoesTo: an output naming the file standard output
// is sent to (gpusim run --json --trace /dev/stdout > out.txt) is written
// through that stream, after what was printed and before what follows;
// replaced by a new file, out.txt kept the trace alone.
func TestWriteToTheFileStdoutGoesTo(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.txt")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved := os.Stdout
	os.Stdout = f
	defer func() { os.Stdout = saved }()
	io.WriteString(f, "summary\n")
	if err := writeFileAtomic(out, func(w io.Writer) error { _, err := io.WriteString(w, "trace\n"); return err }); err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "more\n")
	if b, _ := os.ReadFile(out); string(b) != "summary\ntrace\nmore\n" {
		t.Errorf("%s holds %q", out, b)
	}
}

// TestWriteKeepsPermissions: a file replaced keeps its permission bits (a
// 0640 file stayed 0640, not 0644), a new one is 0644, and a read-only one
// is refused and left as it was.
func TestWriteKeepsPermissions(t *testing.T) {
	dir := t.TempDir()
	put := func(name string) error {
		return writeFileAtomic(name, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err })
	}
	mode := func(name string) os.FileMode {
		st, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		return st.Mode().Perm()
	}
	fresh := filepath.Join(dir, "fresh")
	if err := put(fresh); err != nil || mode(fresh) != 0o644 {
		t.Errorf("a new file: %v, mode %o; want 644", err, mode(fresh))
	}
	kept := filepath.Join(dir, "kept")
	if err := os.WriteFile(kept, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	os.Chmod(kept, 0o640) // whatever the umask
	if err := put(kept); err != nil || mode(kept) != 0o640 {
		t.Errorf("a 640 file: %v, mode %o; want 640", err, mode(kept))
	}
	ro := filepath.Join(dir, "ro")
	if err := os.WriteFile(ro, []byte("old"), 0o400); err != nil {
		t.Fatal(err)
	}
	if err := put(ro); err == nil || mode(ro) != 0o400 {
		t.Errorf("a read-only file: %v, mode %o; want an error and 400", err, mode(ro))
	}
	if b, _ := os.ReadFile(ro); string(b) != "old" {
		t.Errorf("the read-only file holds %q, want it untouched", b)
	}
}

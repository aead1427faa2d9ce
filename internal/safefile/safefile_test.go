package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// outside is a file and an empty directory outside the directory written
// in, and a check that neither changed.
func outside(t *testing.T) (file, dir string, unchanged func()) {
	t.Helper()
	base := t.TempDir()
	file, dir = filepath.Join(base, "victim"), filepath.Join(base, "victimdir")
	if err := os.WriteFile(file, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	return file, dir, func() {
		t.Helper()
		if b, err := os.ReadFile(file); err != nil || string(b) != "precious" {
			t.Errorf("the file outside now holds %q (%v)", b, err)
		}
		if fi2, err := os.Stat(file); err != nil || !fi2.ModTime().Equal(fi.ModTime()) || fi2.Mode() != fi.Mode() {
			t.Errorf("the file outside changed: %v", err)
		}
		if es, err := os.ReadDir(dir); err != nil || len(es) != 0 {
			t.Errorf("the directory outside holds %v (%v)", es, err)
		}
	}
}

func TestLinksAreRefused(t *testing.T) {
	t.Parallel()
	file, dir, unchanged := outside(t)
	d := t.TempDir()
	if err := os.Symlink(file, filepath.Join(d, "a.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(d, "sub")); err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(d, "real")
	if err := os.Mkdir(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	// A link that stays inside is refused too: it is a link in the way.
	if err := os.Symlink(inside, filepath.Join(d, "in")); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, link string }{
		{"a.json", "a.json"},
		{"sub/b.json", "sub"},
		{"sub/deeper/c.json", "sub"},
		{"in/d.json", "in"},
	} {
		check := func(what string, err error) {
			t.Helper()
			want := filepath.Join(d, tt.link)
			if !errors.Is(err, ErrLink) || !strings.Contains(err.Error(), want) {
				t.Errorf("%s %s: %v, want ErrLink naming %s", what, tt.name, err, want)
			}
		}
		check("WriteFile", WriteFile(d, tt.name, []byte("x")))
		dd, err := Open(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, flag := range []int{os.O_EXCL, os.O_TRUNC, os.O_APPEND} {
			f, err := dd.Create(tt.name, flag)
			if f != nil {
				f.Close()
			}
			check("Create", err)
		}
		_, err = dd.Exists(tt.name)
		check("Exists", err)
		dd.Close()
	}
	unchanged()
	if es, _ := os.ReadDir(inside); len(es) != 0 {
		t.Errorf("written through the inside link: %v", es)
	}
}

func TestWriteFileIsAtomicAndMakesDirectories(t *testing.T) {
	t.Parallel()
	d := filepath.Join(t.TempDir(), "new")
	if err := WriteFile(d, "x/y/z.json", []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(d, "x/y/z.json", []byte("two")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(d, "x", "y", "z.json")
	if b, err := os.ReadFile(path); err != nil || string(b) != "two" {
		t.Fatalf("%q %v", b, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", fi.Mode())
	}
	if es, _ := os.ReadDir(filepath.Dir(path)); len(es) != 1 {
		t.Errorf("left behind: %v", es)
	}
	if err := WriteFile(d, "../escape.json", []byte("x")); err == nil {
		t.Error("a name outside the directory was written")
	}
	dd, err := Open(d)
	if err != nil {
		t.Fatal(err)
	}
	defer dd.Close()
	boom := errors.New("disk full")
	if err := dd.WriteAtomic("x/y/z.json", func(f *os.File) error { f.Write([]byte("half")); return boom }); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "two" {
		t.Errorf("a failed write left %q", b)
	}
	if es, _ := os.ReadDir(filepath.Dir(path)); len(es) != 1 {
		t.Errorf("a failed write left: %v", es)
	}
}

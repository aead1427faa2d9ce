package gitrev

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/benchci/benchci/internal/gitfixture"
)

// A path through a revision's links names what they lead to, as a file
// system follows them; a link out of the repository, or a loop, names
// nothing.
func TestThroughLinks(t *testing.T) {
	t.Parallel()
	links := map[string]string{
		"suites":          "bench",
		"bench/old.json":  "../bl/len.json",
		"a":               "b",
		"b":               "c",
		"out":             "../../etc",
		"loop":            "loop",
		"sub/up":          "..",
		"abs":             "/etc",
		"deep/link/x.txt": "../../suites/x.jsonnet",
	}
	lookup := func(p string) (string, bool) { v, ok := links[p]; return v, ok }
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"suites/len.jsonnet", "bench/len.jsonnet", true},
		{"bench/old.json", "bl/len.json", true},
		{"a/f", "c/f", true},
		{"plain/f", "plain/f", true},
		{"sub/up/suites/f", "bench/f", true},
		{"deep/link/x.txt", "bench/x.jsonnet", true},
		{"out/passwd", "", false},
		{"abs/passwd", "", false},
		{"loop/f", "", false},
	} {
		got, ok := throughLinks(c.in, lookup)
		if got != c.want || ok != c.ok {
			t.Errorf("throughLinks(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// A revision's links are written as copies of what they lead to inside
// it, so that a suite imports through them as in a checkout; one that
// leads out of the repository is not, nor is any link itself.
func TestWriteCopiesThroughLinks(t *testing.T) {
	t.Parallel()
	repo := gitfixture.New(t)
	repo.Commit("files", map[string][]byte{"libsrc/common.libsonnet": []byte("{ tol: '5%' }"), "libsrc/deep/x.libsonnet": []byte("{}"), "data.json": []byte("{}")})
	repo.Link("a directory link", "lib", "libsrc")
	repo.Link("a file link", "suites/data.json", "../data.json")
	repo.Link("a link out", "out", "../../etc")
	tree, err := Write(repo.Dir, "HEAD", t.TempDir(), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"lib/common.libsonnet": "{ tol: '5%' }", "lib/deep/x.libsonnet": "{}", "suites/data.json": "{}"} {
		at := filepath.Join(tree.Dir, filepath.FromSlash(name))
		st, err := os.Lstat(at)
		if err != nil || !st.Mode().IsRegular() {
			t.Errorf("%s: %v, want a regular file", name, err)
			continue
		}
		if b, _ := os.ReadFile(at); string(b) != want {
			t.Errorf("%s holds %q, want %q", name, b, want)
		}
	}
	if _, err := os.Lstat(filepath.Join(tree.Dir, "out")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a link out of the repository was written: %v", err)
	}
	// Linked tells the copies from the files they copy.
	for rel, want := range map[string]bool{"lib/common.libsonnet": true, "lib/deep/x.libsonnet": true, "suites/data.json": true, "lib": true, "out/passwd": true,
		"libsrc/common.libsonnet": false, "data.json": false, "suites/other.json": false} {
		if got := tree.Linked(filepath.FromSlash(rel)); got != want {
			t.Errorf("Linked(%s) = %v, want %v", rel, got, want)
		}
	}
}

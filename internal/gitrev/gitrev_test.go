package gitrev

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchci/benchci/internal/gitfixture"
)

func TestWriteRevision(t *testing.T) {
	repo := gitfixture.New(t)
	first := repo.Commit("first", map[string][]byte{"suites/a.jsonnet": []byte("{ v: 1 }"), "lib/x.libsonnet": []byte("{}")})
	repo.Commit("second", map[string][]byte{"suites/a.jsonnet": []byte("{ v: 2 }"), "suites/new.jsonnet": []byte("{}")})
	for _, rev := range []string{first, "HEAD~1"} {
		dest := t.TempDir()
		tr, err := Write(repo.Dir, rev, dest, DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		p, err := tr.Path(filepath.Join(repo.Dir, "suites", "a.jsonnet"))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(p); err != nil || string(got) != "{ v: 1 }" || tr.Commit != first {
			t.Errorf("%s: %q, %v, commit %s", rev, got, err, tr.Commit)
		}
		if _, err := os.Stat(filepath.Join(dest, "suites", "new.jsonnet")); !os.IsNotExist(err) {
			t.Errorf("%s: a later file was written: %v", rev, err)
		}
		if _, err := tr.Path("/etc/passwd"); err == nil {
			t.Error("a path outside the repository was mapped")
		}
	}
	if _, err := Write(repo.Dir, "no-such-branch", t.TempDir(), DefaultLimits); err == nil {
		t.Error("an unknown revision resolved")
	}
	if _, err := Write(repo.Dir, "HEAD", t.TempDir(), Limits{MaxFiles: 2, MaxBytes: 1 << 20}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("3 files under a 2-file limit: %v", err)
	}
}

func TestReadFileAtRevision(t *testing.T) {
	repo := gitfixture.New(t)
	first := repo.Commit("first", map[string][]byte{"baselines/a.json": []byte(`{"v":1}`)})
	repo.Commit("second", map[string][]byte{"baselines/a.json": []byte(`{"v":2}`), "baselines/b.json": []byte(`{}`)})
	path := filepath.Join(repo.Dir, "baselines", "a.json")
	got, commit, err := ReadFile(path, "HEAD~1", 1<<20)
	if err != nil || string(got) != `{"v":1}` || commit != first {
		t.Fatalf("ReadFile at HEAD~1 = %q, %s, %v", got, commit, err)
	}
	if _, _, err := ReadFile(filepath.Join(repo.Dir, "baselines", "b.json"), first, 1<<20); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file added later: %v, want os.ErrNotExist", err)
	}
	if _, _, err := ReadFile(path, "HEAD", 3); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a file over the limit: %v, want ErrTooLarge", err)
	}
	if _, _, err := ReadFile(path, "no-such-branch", 1<<20); err == nil {
		t.Error("an unknown revision resolved")
	}
}

// The tree is written inside dest through no link: a link where a file
// or a directory of the revision goes is refused by its path, and
// nothing outside dest changes.
func TestWriteFollowsNoLink(t *testing.T) {
	repo := gitfixture.New(t)
	repo.Commit("first", map[string][]byte{"suites/a.jsonnet": []byte("{ v: 1 }"), "b.jsonnet": []byte("{}")})
	for _, link := range []string{"suites", filepath.Join("suites", "a.jsonnet"), "b.jsonnet"} {
		base := t.TempDir()
		victim, victimDir := filepath.Join(base, "victim"), filepath.Join(base, "victimdir")
		if err := os.WriteFile(victim, []byte("precious"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(victimDir, 0o755); err != nil {
			t.Fatal(err)
		}
		before, _ := os.Stat(victim)
		dest := t.TempDir()
		target := victim
		if link == "suites" {
			target = victimDir
		} else if err := os.MkdirAll(filepath.Join(dest, filepath.Dir(link)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(dest, link)); err != nil {
			t.Fatal(err)
		}
		_, err := Write(repo.Dir, "HEAD", dest, DefaultLimits)
		if want := filepath.Join(dest, link); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("a link at %s: %v, want a refusal naming %s", link, err, want)
		}
		if b, err := os.ReadFile(victim); err != nil || string(b) != "precious" {
			t.Errorf("a link at %s: the file outside holds %q (%v)", link, b, err)
		}
		if after, err := os.Stat(victim); err != nil || !after.ModTime().Equal(before.ModTime()) {
			t.Errorf("a link at %s: the file outside was touched", link)
		}
		if es, err := os.ReadDir(victimDir); err != nil || len(es) != 0 {
			t.Errorf("a link at %s: the directory outside holds %v (%v)", link, es, err)
		}
	}
}

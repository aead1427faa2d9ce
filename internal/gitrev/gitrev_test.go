package gitrev

import (
	"errors"
	"os"
	"path/filepath"
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

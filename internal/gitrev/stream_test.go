package gitrev

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/go-git/go-git/v5"

	"github.com/benchci/benchci/internal/gitfixture"
)

// A blob is streamed to its file, not inflated whole into memory: the
// bytes allocated while writing a tree with a 64 MiB blob are a small
// fraction of the blob, whether the blob is a loose object or in a pack.
// (TotalAlloc counts every byte allocated, freed or not, so the bound
// holds however the collector runs; no other test in this package runs
// beside this one.)
func TestWriteStreamsBlobs(t *testing.T) {
	const size = 64 << 20
	repo := gitfixture.New(t)
	repo.Commit("big", map[string][]byte{"big.bin": make([]byte, size), "suites/a.jsonnet": []byte("{}")})
	for _, packed := range []bool{false, true} {
		name := "loose"
		if packed {
			name = "packed"
		}
		t.Run(name, func(t *testing.T) {
			if packed { // the same repository, its objects now in a pack
				pack(t, repo.Dir)
			}
			dest := t.TempDir()
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			if _, err := Write(repo.Dir, "HEAD", dest, DefaultLimits); err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%s: %.1f MiB allocated writing a %d MiB blob", name, float64(alloc)/(1<<20), size>>20)
			if alloc > size/4 {
				t.Errorf("%s: %.1f MiB allocated writing a %d MiB blob: it was read into memory", name, float64(alloc)/(1<<20), size>>20)
			}
			f, err := os.Open(filepath.Join(dest, "big.bin"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			n, err := io.Copy(zeros{t}, f)
			if err != nil || n != size {
				t.Errorf("big.bin: %d bytes (%v), want %d zeros", n, err, size)
			}
		})
	}
}

// zeros is a writer that fails the test on a byte that is not zero.
type zeros struct{ t *testing.T }

func (z zeros) Write(p []byte) (int, error) {
	if bytes.ContainsFunc(p, func(r rune) bool { return r != 0 }) {
		z.t.Error("big.bin holds a byte that is not zero")
	}
	return len(p), nil
}

// pack puts every object of the repository at dir in one pack and removes
// the loose ones.
func pack(t *testing.T, dir string) {
	t.Helper()
	r, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.RepackObjects(&git.RepackConfig{}); err != nil {
		t.Fatal(err)
	}
	objects := filepath.Join(dir, ".git", "objects")
	entries, err := os.ReadDir(objects)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if len(e.Name()) == 2 {
			if err := os.RemoveAll(filepath.Join(objects, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	packs, _ := filepath.Glob(filepath.Join(objects, "pack", "*.pack"))
	if len(packs) != 1 {
		t.Fatalf("%d packs after repacking", len(packs))
	}
}

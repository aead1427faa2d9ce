// Package gitfixture builds git repositories of committed baselines for
// tests: history's, and the history command's.
package gitfixture

import (
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/benchci/benchci/framework/baseline"
	"github.com/benchci/benchci/framework/result"
)

// Repo is a git repository made for a test, committing with a clock that
// advances an hour a commit.
type Repo struct {
	t    testing.TB
	Dir  string
	git  *git.Repository
	when time.Time
}

// New makes an empty repository in a temporary directory.
func New(t testing.TB) *Repo {
	dir := t.TempDir()
	g, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	return &Repo{t: t, Dir: dir, git: g, when: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)}
}

// Commit writes files (path -> contents; nil deletes) and commits them,
// returning the commit's hash.
func (r *Repo) Commit(msg string, files map[string][]byte) string {
	r.t.Helper()
	wt, err := r.git.Worktree()
	if err != nil {
		r.t.Fatal(err)
	}
	for path, data := range files {
		full := filepath.Join(r.Dir, path)
		if data == nil {
			if _, err := wt.Remove(path); err != nil {
				r.t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(full, data, 0o644); err != nil {
			r.t.Fatal(err)
		}
		if _, err := wt.Add(path); err != nil {
			r.t.Fatal(err)
		}
	}
	r.when = r.when.Add(time.Hour)
	sig := &object.Signature{Name: "Test", Email: "test@example.invalid", When: r.when}
	h, err := wt.Commit(msg, &git.CommitOptions{Author: sig, Committer: sig, AllowEmptyCommits: true})
	if err != nil {
		r.t.Fatal(err)
	}
	return h.String()
}

// Link makes path a symbolic link to target and commits it, returning
// the commit's hash.
func (r *Repo) Link(msg, path, target string) string {
	r.t.Helper()
	full := filepath.Join(r.Dir, path)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.Symlink(target, full); err != nil {
		r.t.Fatal(err)
	}
	wt, err := r.git.Worktree()
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := wt.Add(path); err != nil {
		r.t.Fatal(err)
	}
	return r.Commit(msg, nil)
}

// Baseline is the baseline at src with its TTFT
// statistics multiplied by ttft and every latency and throughput moved by
// 1% noise drawn from seed, re-summarized as benchci writes it.
func Baseline(t *testing.T, src string, seed uint64, ttft float64, workload string) []byte {
	t.Helper()
	b, err := baseline.Read(src)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 5))
	r := b.Result
	if workload != "" {
		r.Suite.WorkloadHash = workload
	}
	for i := range r.Points {
		p := &r.Points[i]
		for _, name := range slices.Sorted(maps.Keys(p.Latency)) {
			f := 1 + 0.01*rng.NormFloat64()
			if name == "ttft" {
				f *= ttft
			}
			h, err := result.DecodeHistogram(p.Histograms[name])
			if err != nil {
				t.Fatal(err)
			}
			h = scaled(h, f)
			if p.Histograms[name], err = result.EncodeHistogram(h); err != nil {
				t.Fatal(err)
			}
			p.Latency[name] = result.Summarize(h, 1000)
		}
		p.Throughput.OutputTokens *= 1 + 0.01*rng.NormFloat64()
	}
	nb, err := baseline.FromResult(r, "")
	if err != nil {
		t.Fatal(err)
	}
	nb.Provenance.Host = "test" // the same bytes on every machine
	path := filepath.Join(t.TempDir(), "b.json")
	if err := baseline.Write(path, nb); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// scaled is h with every value multiplied by f.
func scaled(h *hdrhistogram.Histogram, f float64) *hdrhistogram.Histogram {
	out := hdrhistogram.New(h.LowestTrackableValue(), h.HighestTrackableValue(), int(h.SignificantFigures()))
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			out.RecordValues(int64(float64(b.To)*f), b.Count)
		}
	}
	return out
}

// Tracked says which files under the repository holding dir git tracks,
// by their paths relative to dir (slash-separated): the project's own
// example suites, not the ones a newcomer following a guide wrote beside
// them. Outside a repository (an unpacked source archive) it tracks
// everything.
func Tracked(t testing.TB, dir string) func(rel string) bool {
	t.Helper()
	all := func(string) bool { return true }
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		return all
	}
	wt, err := repo.Worktree()
	if err != nil {
		return all
	}
	idx, err := repo.Storer.Index()
	if err != nil {
		return all
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	root := wt.Filesystem.Root()
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	if a, err := filepath.EvalSymlinks(abs); err == nil {
		abs = a
	}
	prefix, err := filepath.Rel(root, abs)
	if err != nil {
		return all
	}
	set := map[string]bool{}
	for _, e := range idx.Entries {
		if rel, ok := strings.CutPrefix(e.Name, filepath.ToSlash(prefix)+"/"); ok || prefix == "." {
			if prefix == "." {
				rel = e.Name
			}
			set[rel] = true
		}
	}
	return func(rel string) bool { return set[filepath.ToSlash(rel)] }
}

package history

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/changepoint"
)

// lyingBlob writes a loose object whose header says it holds size bytes
// while it holds data: a "1.2 GB" blob that costs nothing to make. Read,
// it yields data, so whoever reads it before checking its size takes it
// for a baseline.
func (s *store) lyingBlob(size int64, data []byte) plumbing.Hash {
	s.tb.Helper()
	h := plumbing.ComputeHash(plumbing.BlobObject, fmt.Appendf(nil, "lying %d %d", size, len(data)))
	var b bytes.Buffer
	z := zlib.NewWriter(&b)
	fmt.Fprintf(z, "blob %d\x00", size)
	z.Write(data)
	if err := z.Close(); err != nil {
		s.tb.Fatal(err)
	}
	path := filepath.Join(s.dir, ".git", "objects", h.String()[:2], h.String()[2:])
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		s.tb.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o444); err != nil {
		s.tb.Fatal(err)
	}
	return h
}

// F17: a version over the size a baseline file may be is skipped by its
// size, before a byte of it is read, with a reason naming its size and
// the limit; the versions around it are read. (The "1.2 GiB" blob's
// header says so and it holds a valid baseline: read first, it would be
// taken for a version.) A blob whose header understates it is caught by
// the limit on the read.
func TestOversizedVersionIsSkippedUnread(t *testing.T) {
	s := newStore(t)
	g := newSynth(t)
	rng := rand.New(rand.NewPCG(1, 2))
	first := s.commit("one", s.blob(g.baseline(1, rng)))
	huge := s.commit("huge", s.lyingBlob(1288490189, g.baseline(1, rng)))
	last := s.commit("three", s.blob(g.baseline(1, rng)))
	repo, err := Open(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	w, err := repo.Versions(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Versions) != 2 || w.Versions[0].Commit != first || w.Versions[1].Commit != last {
		t.Errorf("versions %+v, want %s and %s", w.Versions, short(first), short(last))
	}
	limit := bytesize(result.MaxFileBytes) // the results reader's limit
	if len(w.Skipped) != 1 || w.Skipped[0].Commit != huge ||
		!strings.Contains(w.Skipped[0].Reason, "1.2 GiB") || !strings.Contains(w.Skipped[0].Reason, "over the "+limit) {
		t.Errorf("skipped %+v, want %s skipped as 1.2 GiB, over %s", w.Skipped, short(huge), limit)
	}

	// Lower the limit under a real baseline (about 35 KiB): every version
	// is skipped by its size, and one whose header says 100 bytes by the
	// read's limit.
	defer func(n int64) { maxBaselineBytes = n }(maxBaselineBytes)
	maxBaselineBytes = 16 << 10
	small := s.commit("understated", s.lyingBlob(100, g.baseline(1, rng)))
	w, err = repo.Versions(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Versions) != 0 || len(w.Skipped) != 4 {
		t.Fatalf("versions %d, skipped %+v: want every version skipped", len(w.Versions), w.Skipped)
	}
	for _, sk := range w.Skipped {
		if !strings.Contains(sk.Reason, "over the 16 KiB") {
			t.Errorf("%s skipped for %q, want over the 16 KiB limit", short(sk.Commit), sk.Reason)
		}
	}
	if !strings.Contains(w.Skipped[0].Reason, "KiB, over") || w.Skipped[3].Commit != small {
		t.Errorf("skipped %+v", w.Skipped)
	}
}

// M2: a blob that comes back (A, B, A) is read once and still makes a
// version each time it comes back, as one does after the file was
// deleted; a commit whose tree is its parent's is no version.
func TestVersionsOfARecurringBlob(t *testing.T) {
	s := newStore(t)
	g := newSynth(t)
	rng := rand.New(rand.NewPCG(3, 4))
	a, b := s.blob(g.baseline(1, rng)), s.blob(g.baseline(1.3, rng))
	want := []string{s.commit("a", a), s.commit("b", b)}
	s.commit("b again", b)
	want = append(want, s.commit("a again", a))
	s.commit("a deleted", plumbing.ZeroHash)
	want = append(want, s.commit("a restored", a))
	repo, err := Open(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	w, err := repo.Versions(context.Background(), path)
	if err != nil || len(w.Skipped) != 0 || w.Commits != 6 {
		t.Fatal(err, w)
	}
	if len(w.Versions) != 4 {
		t.Fatalf("%d versions, want 4", len(w.Versions))
	}
	for i, v := range w.Versions {
		if v.Commit != want[i] {
			t.Errorf("version %d at %s, want %s", i, v.Short(), short(want[i]))
		}
	}
	if w.Versions[0].Baseline != w.Versions[2].Baseline || w.Versions[2].Baseline != w.Versions[3].Baseline {
		t.Error("the blob that came back was parsed twice")
	}
	if w.Versions[0].Baseline.Result != nil {
		t.Error("a version keeps its embedded result")
	}
}

// M3: in a shallow clone (as actions/checkout makes by default) history
// reads what the clone holds and says where it stopped and how to fetch
// the rest, instead of failing on the first missing parent.
func TestShallowClone(t *testing.T) {
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git on PATH")
	}
	s := newStore(t)
	g := newSynth(t)
	rng := rand.New(rand.NewPCG(5, 6))
	var commits []string
	for i := range 6 {
		commits = append(commits, s.commit(fmt.Sprintf("baseline %d", i), s.blob(g.baseline(1, rng))))
	}
	s.commit("docs", s.blob(g.baseline(1, rng)))
	clone := func(depth int) string {
		dir := filepath.Join(t.TempDir(), "clone")
		cmd := exec.Command(gitBin, "clone", "--quiet", "--depth", fmt.Sprint(depth), "file://"+s.dir, dir)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git clone: %v\n%s", err, out)
		}
		return dir
	}
	repo, err := Open(clone(3))
	if err != nil {
		t.Fatal(err)
	}
	w, err := repo.Versions(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if w.Commits != 3 || w.Shallow != commits[4] || len(w.Versions) != 3 || w.Versions[0].Commit != commits[4] {
		t.Errorf("commits %d, shallow at %s, %d versions from %s: want 3 commits from %s", w.Commits, short(w.Shallow), len(w.Versions), w.Versions[0].Short(), short(commits[4]))
	}
	note := w.ShallowNote()
	for _, want := range []string{"shallow clone", short(commits[4]), "3 versions seen in 3 commits", "git fetch --unshallow", "fetch-depth: 0"} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}

	// A whole clone says nothing of the kind.
	full, err := Open(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	if w, err := full.Versions(context.Background(), path); err != nil || w.Shallow != "" || w.ShallowNote() != "" || len(w.Versions) != 7 {
		t.Errorf("whole history: %v, %+v", err, w)
	}

	// A clone too shallow to hold the file says how to fetch more.
	s.commit("drop the baseline", plumbing.ZeroHash)
	repo, err = Open(clone(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Versions(context.Background(), path); !errors.Is(err, ErrNeverCommitted) || !strings.Contains(err.Error(), "git fetch --unshallow") {
		t.Errorf("too shallow: %v", err)
	}
}

// countdown is a context canceled at its n-th check of Err: it stops a
// walk or a search part way through, at a point that does not depend on
// timing.
type countdown struct {
	context.Context
	mu     sync.Mutex
	n      int
	done   chan struct{}
	checks int
}

func newCountdown(n int) *countdown {
	return &countdown{Context: context.Background(), n: n, done: make(chan struct{})}
}

func (c *countdown) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.checks++
	if c.n > 0 {
		if c.n--; c.n == 0 {
			close(c.done)
		}
	}
	if c.n == 0 {
		return context.Canceled
	}
	return nil
}

func (c *countdown) Done() <-chan struct{} { return c.done }

// F19: the walk and the change-point search stop when their context is
// canceled (SIGTERM, Ctrl-C), part way through, with context.Canceled.
func TestCanceled(t *testing.T) {
	dir := synthRepo(t, 40)
	repo, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := repo.Versions(ctx, path); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled walk: %v", err)
	}
	// Canceled at the 20th of 40 commits.
	c := newCountdown(20)
	if _, err := repo.Versions(c, path); !errors.Is(err, context.Canceled) || c.checks != 20 {
		t.Errorf("walk canceled part way: %v after %d checks", err, c.checks)
	}
	w, err := repo.Versions(context.Background(), path)
	if err != nil || len(w.Versions) != 40 {
		t.Fatal(err)
	}
	if _, err := AnalyzeContext(ctx, w.Versions, changepoint.Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled analysis: %v", err)
	}
	// Canceled in the first series' permutation test: no series runs to
	// its end after it (a goroutine a series, each stopping at its next
	// check).
	c = newCountdown(50)
	if _, err := AnalyzeContext(c, w.Versions, changepoint.Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("analysis canceled part way: %v", err)
	}
	if groups, err := AnalyzeContext(context.Background(), w.Versions, changepoint.Options{}); err != nil || len(groups) != 1 {
		t.Errorf("uncanceled: %v", err)
	}
}

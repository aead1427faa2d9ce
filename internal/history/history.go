// Package history reads every committed version of a baseline from a git
// repository and finds the commits that moved its figures.
//
// Baselines are committed, so git is the archive of every figure a suite
// ever gated on. History walks the first-parent line from HEAD (the
// branch as it was merged, not every side commit of every merged branch)
// and keeps each commit that changed the baseline file's contents.
package history

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/benchci/benchci/framework/baseline"
	"github.com/benchci/benchci/framework/result"
)

// Version is one committed version of a baseline.
type Version struct {
	Commit  string    `json:"commit"`
	Time    time.Time `json:"time"`
	Subject string    `json:"subject"`
	// Baseline is the file as that commit left it: its header and
	// summary (the embedded result, checked against the summary when the
	// version was read, is not kept, so that a long history holds only
	// the figures it compares).
	Baseline *baseline.File `json:"-"`
	// Points are the embedded result's valid trials, trimmed to what a
	// change is judged on: counts, windows, throughputs, the gated
	// latencies' summaries and histograms.
	Points []result.Point `json:"-"`
}

// Short is the commit's abbreviated hash.
func (v Version) Short() string { return short(v.Commit) }

func short(h string) string {
	if len(h) > 7 {
		return h[:7]
	}
	return h
}

// Skipped is a version that could not be read, and why; a history is
// still worth showing without it.
type Skipped struct {
	Commit string `json:"commit"`
	Reason string `json:"reason"`
}

// Repo is an open repository and where its work tree is.
type Repo struct {
	repo *git.Repository
	root string
}

// Open opens the repository holding dir (dir or any parent of it).
func Open(dir string) (*Repo, error) {
	r, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		return nil, fmt.Errorf("open the git repository at %s: %w", dir, err)
	}
	wt, err := r.Worktree()
	if err != nil {
		return nil, fmt.Errorf("open the git repository at %s: %w", dir, err)
	}
	return &Repo{repo: r, root: wt.Filesystem.Root()}, nil
}

// Rel turns a path (absolute, or relative to the working directory) into
// the slash-separated path inside the repository that git stores.
func (r *Repo) Rel(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	root, err := filepath.EvalSymlinks(r.root)
	if err != nil {
		return "", err
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		abs = filepath.Join(dir, filepath.Base(abs))
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is outside the repository at %s", path, r.root)
	}
	return filepath.ToSlash(rel), nil
}

// maxBaselineBytes is the largest version of a baseline history reads:
// the limit the results reader puts on a results or baseline file. A
// version over it is skipped unread. A variable so that tests can lower
// it.
var maxBaselineBytes int64 = result.MaxFileBytes

// parseBudget bounds the bytes of versions read and not yet parsed, so
// that parsing in parallel holds one version of the largest size at a
// time (parsing takes about ten times a file's size), or many small ones.
const parseBudget = result.MaxFileBytes

// Walk is what Versions found along HEAD's first-parent line.
type Walk struct {
	// Versions are the versions that parse, oldest first.
	Versions []Version
	// Skipped are the versions that do not, or that are too large to read.
	Skipped []Skipped
	// Commits is how many commits the walk read.
	Commits int
	// Shallow is set when the walk stopped before the line's first commit
	// because the repository does not hold the parent of this one, the
	// oldest it read: a shallow clone.
	Shallow string
}

// ShallowNote says, for a walk that stopped at a shallow clone's edge,
// what it saw and how to fetch the rest; "" for a whole history.
func (w *Walk) ShallowNote() string {
	if w.Shallow == "" {
		return ""
	}
	return fmt.Sprintf("shallow clone: the history stops at %s, whose parents were not fetched (%s seen in %s); "+
		"run `git fetch --unshallow` (or actions/checkout with fetch-depth: 0) for the whole history",
		short(w.Shallow), count(len(w.Versions)+len(w.Skipped), "version"), count(w.Commits, "commit"))
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// Versions returns the versions of the file at path (inside the
// repository) along HEAD's first-parent line, oldest first: one per
// commit that changed its contents. Versions that do not parse as a
// baseline, or are larger than a baseline file may be, are skipped, with
// the reason. In a shallow clone the walk stops at the oldest commit the
// clone holds, and says so (Walk.Shallow). It stops with ctx's error
// when ctx is done.
//
// The walk reads each commit once and a commit's tree only when it
// differs from its child's; each distinct version of the file is read
// once, its size checked first, and parsed on a pool of goroutines. Only
// each version's header and summary are kept.
func (r *Repo) Versions(ctx context.Context, path string) (*Walk, error) {
	head, err := r.repo.Head()
	if err != nil {
		return nil, fmt.Errorf("read HEAD: %w", err)
	}
	c, err := r.repo.CommitObject(head.Hash())
	if err != nil {
		return nil, fmt.Errorf("read HEAD's commit: %w", err)
	}
	shallow := map[plumbing.Hash]bool{}
	if hs, err := r.repo.Storer.Shallow(); err == nil {
		for _, h := range hs {
			shallow[h] = true
		}
	}
	// Walk back to the root (or the shallow edge), noting the blob at
	// each commit. A version begins at the oldest commit of each run of
	// one blob: runs keeps, newest first, the oldest commit read of each
	// run, so the walk holds one entry per version, not per commit.
	type at struct {
		commit  plumbing.Hash
		when    time.Time
		subject string
		blob    plumbing.Hash
	}
	w := &Walk{}
	var runs []at
	var lastTree plumbing.Hash
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("read the history of %s: %w", path, err)
		}
		blob := plumbing.ZeroHash
		if n := len(runs); n > 0 && c.TreeHash == lastTree {
			blob = runs[n-1].blob // the same tree: the same file
		} else {
			tree, err := c.Tree()
			if err != nil {
				return nil, fmt.Errorf("read the tree of %s: %w", short(c.Hash.String()), err)
			}
			if e, err := tree.FindEntry(path); err == nil && e.Mode.IsFile() {
				blob = e.Hash
			}
			lastTree = c.TreeHash
		}
		a := at{c.Hash, c.Committer.When, subject(c.Message), blob}
		if n := len(runs); n > 0 && runs[n-1].blob == blob {
			runs[n-1] = a
		} else {
			runs = append(runs, a)
		}
		w.Commits++
		if c.NumParents() == 0 {
			break
		}
		if shallow[c.Hash] {
			w.Shallow = c.Hash.String()
			break
		}
		p, err := c.Parent(0)
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			w.Shallow = c.Hash.String() // a shallow clone whose shallow file went missing, or a partial one
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read the parent of %s: %w", short(c.Hash.String()), err)
		}
		c = p
	}
	// The versions, oldest first, and the distinct blobs they hold.
	type version struct {
		Version
		blob int // index into blobs
	}
	var versions []version
	var blobs []plumbing.Hash
	index := map[plumbing.Hash]int{}
	for i := len(runs) - 1; i >= 0; i-- {
		a := runs[i]
		if a.blob == plumbing.ZeroHash {
			continue // deleted here; a later commit may bring it back
		}
		b, ok := index[a.blob]
		if !ok {
			b = len(blobs)
			index[a.blob] = b
			blobs = append(blobs, a.blob)
		}
		versions = append(versions, version{Version{Commit: a.commit.String(), Time: a.when, Subject: a.subject}, b})
	}
	files, points, errs, err := r.parse(ctx, blobs)
	if err != nil {
		return nil, fmt.Errorf("read the history of %s: %w", path, err)
	}
	for _, v := range versions {
		if err := errs[v.blob]; err != nil {
			w.Skipped = append(w.Skipped, Skipped{Commit: v.Commit, Reason: err.Error()})
			continue
		}
		v.Baseline, v.Points = files[v.blob], points[v.blob]
		w.Versions = append(w.Versions, v.Version)
	}
	if len(w.Versions) == 0 && len(w.Skipped) == 0 {
		if note := w.ShallowNote(); note != "" {
			return nil, fmt.Errorf("%s: %w; %s", path, ErrNeverCommitted, note)
		}
		return nil, fmt.Errorf("%s: %w", path, ErrNeverCommitted)
	}
	return w, nil
}

// ErrNeverCommitted says no commit on the line holds the file.
var ErrNeverCommitted = errors.New("no commit on HEAD's first-parent line holds it")

// parse reads and parses each blob: the reading here (a repository is
// read by one goroutine), the parsing on a pool, holding no more than
// parseBudget bytes of blobs at a time (a blob larger than that alone).
// A blob that cannot be read or parsed has its error in errs; err is
// ctx's error when ctx is done.
func (r *Repo) parse(ctx context.Context, blobs []plumbing.Hash) (files []*baseline.File, points [][]result.Point, errs []error, err error) {
	files, points, errs = make([]*baseline.File, len(blobs)), make([][]result.Point, len(blobs)), make([]error, len(blobs))
	type job struct {
		i     int
		data  []byte
		grant int
	}
	const unit = 1 << 20
	tokens := make(chan struct{}, parseBudget/unit)
	jobs := make(chan job)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), max(len(blobs), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				f, err := baseline.Parse(j.data)
				if err == nil {
					// The embedded result was checked against the
					// summary; history keeps of it only what a change
					// is judged on.
					points[j.i] = trimmed(f.Result.Points)
					f.Result = nil
				}
				files[j.i], errs[j.i] = f, err
				for range j.grant {
					<-tokens
				}
			}
		}()
	}
	defer func() {
		close(jobs)
		wg.Wait()
	}()
	for i, h := range blobs {
		if err := ctx.Err(); err != nil {
			return nil, nil, nil, err
		}
		data, err := r.readBlob(h)
		if err != nil {
			errs[i] = err
			continue
		}
		grant := min(max((len(data)+unit-1)/unit, 1), cap(tokens))
		for range grant {
			select {
			case tokens <- struct{}{}:
			case <-ctx.Done():
				return nil, nil, nil, ctx.Err()
			}
		}
		select {
		case jobs <- job{i, data, grant}:
		case <-ctx.Done():
			return nil, nil, nil, ctx.Err()
		}
	}
	return files, points, errs, nil
}

// readBlob reads a blob of at most maxBaselineBytes, checking its size
// before reading any of it.
func (r *Repo) readBlob(h plumbing.Hash) ([]byte, error) {
	size, err := r.repo.Storer.EncodedObjectSize(h)
	if err != nil {
		return nil, fmt.Errorf("read the file: %w", err)
	}
	if size > maxBaselineBytes {
		return nil, fmt.Errorf("the file is %s, over the %s a baseline file may be: not read", bytesize(size), bytesize(maxBaselineBytes))
	}
	blob, err := r.repo.BlobObject(h)
	if err != nil {
		return nil, fmt.Errorf("read the file: %w", err)
	}
	rd, err := blob.Reader()
	if err != nil {
		return nil, fmt.Errorf("read the file: %w", err)
	}
	defer rd.Close()
	data, err := io.ReadAll(io.LimitReader(rd, maxBaselineBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read the file: %w", err)
	}
	if int64(len(data)) > maxBaselineBytes {
		return nil, fmt.Errorf("the file is over the %s a baseline file may be: not read", bytesize(maxBaselineBytes))
	}
	return data, nil
}

// bytesize writes n bytes in binary units.
func bytesize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	v := float64(n) / float64(div)
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d %ciB", int64(v), "KMGTPE"[exp])
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTPE"[exp])
}

// maxSubject bounds the subject kept of each commit: a commit message is
// anyone's words, of any length.
const maxSubject = 200

func subject(msg string) string {
	s, _, _ := strings.Cut(strings.TrimSpace(msg), "\n")
	s = strings.Clone(s) // not the whole message
	if len(s) > maxSubject {
		cut := maxSubject
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

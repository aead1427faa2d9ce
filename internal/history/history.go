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
	"slices"
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
	// change is judged on (Trial). Versions that left a trial as it was
	// share it, as they share its point's summary figures.
	Points []*Trial `json:"-"`
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

// DefaultMaxRead is the most bytes of versions one history reads: the
// newest versions are read first, and once the next would take the
// reading over it, it and every older version are left out, and the walk
// says so (Walk.LeftOutNote). 2 GiB is 150 versions of a 13 MB baseline
// that all differ (each distinct version is read once however many
// commits hold it), and bounds the time a history of thousands of
// re-recorded baselines takes.
const DefaultMaxRead int64 = 2 << 30

// Options are what Read takes beyond the file.
type Options struct {
	// MaxRead bounds the bytes of versions read (DefaultMaxRead when 0).
	MaxRead int64
}

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
	// LeftOut is how many of the oldest versions were not read, and
	// LeftOutWhy why: the byte budget reached, or the walk stopped (its
	// context done). Versions and Skipped are the newer ones, read.
	LeftOut    int
	LeftOutWhy string
	// BytesRead is the bytes of versions read (each distinct one once).
	BytesRead int64
	// Parsed is how many distinct versions (blobs) were parsed and
	// verified; Decoded how many histograms were decoded to verify them
	// (each distinct one once: Version.Points keeps only those).
	Parsed, Decoded int
}

// LeftOutNote says, for a walk that left old versions out, how many and
// why; "" when it read them all.
func (w *Walk) LeftOutNote() string {
	if w.LeftOut == 0 {
		return ""
	}
	n := count(w.LeftOut, "older version")
	return fmt.Sprintf("%s left out: %s (%s read)", n, w.LeftOutWhy, bytesize(w.BytesRead))
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

// Versions is Read with the default options.
func (r *Repo) Versions(ctx context.Context, path string) (*Walk, error) {
	return r.Read(ctx, path, Options{})
}

// Read returns the versions of the file at path (inside the repository)
// along HEAD's first-parent line, oldest first: one per commit that
// changed its contents. Versions that do not parse as a baseline, or are
// larger than a baseline file may be, are skipped, with the reason. In a
// shallow clone the walk stops at the oldest commit the clone holds, and
// says so (Walk.Shallow). Versions are read newest first, up to
// o.MaxRead bytes; the older ones are left out, and the walk says so
// (Walk.LeftOut).
//
// When ctx is done it stops, waiting for its goroutines, and returns
// ctx's error with the walk as far as it got: the newest versions read
// (every one of them whole and verified), and the older ones counted in
// LeftOut.
//
// The walk reads each commit once and a commit's tree only when it
// differs from its child's; each distinct version of the file (blob) is
// read and verified once, its size checked first, and parsed on a pool of
// goroutines. Only each version's header and summary are kept, and of
// its embedded result the figures a change is judged on: the summary's
// figures and the histograms of the gated latencies, which are the
// histograms decoded to verify it, each distinct one once (a baseline
// commit that re-records some points leaves the others' histograms as
// they were).
func (r *Repo) Read(ctx context.Context, path string, o Options) (*Walk, error) {
	budget := o.MaxRead
	if budget <= 0 {
		budget = DefaultMaxRead
	}
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
			return w, fmt.Errorf("read the history of %s: %w", path, err)
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
	// The distinct blobs, newest first (the order they are read in), and
	// the versions, oldest first, each with its blob.
	type version struct {
		Version
		blob int // index into blobs
	}
	var versions []version
	var blobs []plumbing.Hash
	index := map[plumbing.Hash]int{}
	for _, a := range runs {
		if _, ok := index[a.blob]; !ok && a.blob != plumbing.ZeroHash {
			index[a.blob] = len(blobs)
			blobs = append(blobs, a.blob)
		}
	}
	for i := len(runs) - 1; i >= 0; i-- {
		a := runs[i]
		if a.blob == plumbing.ZeroHash {
			continue // deleted here; a later commit may bring it back
		}
		versions = append(versions, version{Version{Commit: a.commit.String(), Time: a.when, Subject: a.subject}, index[a.blob]})
	}
	rd, err := r.parse(ctx, blobs, budget)
	w.BytesRead, w.Parsed, w.Decoded = rd.bytes, rd.parsed, rd.cache.decodes()
	// The newest versions whose blobs were read, back to the first that
	// was not: the older ones are left out, so that what is shown is a
	// history without gaps.
	first := 0
	for i := len(versions) - 1; i >= 0; i-- {
		if !rd.blobs[versions[i].blob].done {
			first = i + 1
			break
		}
	}
	w.LeftOut = first
	if first > 0 {
		w.LeftOutWhy = rd.stopped
	}
	for _, v := range versions[first:] {
		b := &rd.blobs[v.blob]
		if b.err != nil {
			w.Skipped = append(w.Skipped, Skipped{Commit: v.Commit, Reason: b.err.Error()})
			continue
		}
		v.Baseline, v.Points = b.file, b.points
		w.Versions = append(w.Versions, v.Version)
	}
	if err != nil {
		return w, fmt.Errorf("read the history of %s: %w", path, err)
	}
	if len(w.Versions) == 0 && len(w.Skipped) == 0 && w.LeftOut == 0 {
		if note := w.ShallowNote(); note != "" {
			return nil, fmt.Errorf("%s: %w; %s", path, ErrNeverCommitted, note)
		}
		return nil, fmt.Errorf("%s: %w", path, ErrNeverCommitted)
	}
	return w, nil
}

// ErrNeverCommitted says no commit on the line holds the file.
var ErrNeverCommitted = errors.New("no commit on HEAD's first-parent line holds it")

// parsedBlob is what reading one blob came to. A blob not done was not
// read (the budget, or the walk stopped) or its parsing was stopped.
type parsedBlob struct {
	done   bool
	file   *baseline.File
	points []*Trial
	err    error
}

// reading is what parse read.
type reading struct {
	blobs   []parsedBlob
	bytes   int64
	parsed  int
	stopped string // why the blobs not done were not read
	cache   *histCache
	shared  *shared
}

// parsedHook, when set (by tests), is called after each blob is parsed
// and its result kept.
var parsedHook func()

// verifiedHistograms names the histograms a version's verification
// decodes: those of the gated latencies, whose summaries history shows
// and whose histograms it judges changes by, and the output tokens',
// whose longest answer bounds the output throughput it shows. The others
// (scheduling lags, prompt lengths, ...) are neither decoded nor kept.
func verifiedHistograms(name string) bool {
	return slices.Contains(latencyNames, name) || name == result.OutputTokensHistogram
}

// parse reads and parses each blob, in order, until the bytes read would
// pass budget: the reading here (a repository is read by one goroutine),
// the parsing on a pool, holding no more than parseBudget bytes of blobs
// at a time (a blob larger than that alone). A blob that cannot be read
// or parsed has its error kept. When ctx is done it stops reading, stops
// the parsing under way, waits for the pool, and returns ctx's error
// with what was parsed.
func (r *Repo) parse(ctx context.Context, blobs []plumbing.Hash, budget int64) (*reading, error) {
	rd := &reading{blobs: make([]parsedBlob, len(blobs)), cache: newHistCache(), shared: newShared()}
	type job struct {
		i     int
		data  []byte
		grant int
	}
	const unit = 1 << 20
	tokens := make(chan struct{}, parseBudget/unit)
	jobs := make(chan job)
	var mu sync.Mutex // guards rd.parsed
	var wg sync.WaitGroup
	opts := result.VerifyOptions{Histograms: verifiedHistograms, Summarize: rd.cache.summarize, Context: ctx}
	for range min(runtime.GOMAXPROCS(0), max(len(blobs), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				// Stopped part way (ctx done), a blob is neither a
				// version nor a reason to skip one: it stays not done.
				if f, err := baseline.ParseWith(j.data, opts); err == nil || ctx.Err() == nil {
					b := &rd.blobs[j.i]
					if err == nil {
						// The summary was checked against the embedded
						// result; history keeps of it only what a change
						// is judged on.
						b.points = rd.shared.trials(f.Result.Points, rd.cache.intern)
						f.Result = nil
						rd.shared.summaries(f.Summary)
					}
					b.file, b.err, b.done = f, err, true
					mu.Lock()
					rd.parsed++
					mu.Unlock()
					if parsedHook != nil {
						parsedHook()
					}
				}
				for range j.grant {
					<-tokens
				}
			}
		}()
	}
	err := func() error {
		for i, h := range blobs {
			if err := ctx.Err(); err != nil {
				rd.stopped = "stopped: " + err.Error()
				return err
			}
			if size, err := r.repo.Storer.EncodedObjectSize(h); err == nil && size <= maxBaselineBytes && rd.bytes+size > budget {
				rd.stopped = fmt.Sprintf("byte budget of %s reached", bytesize(budget))
				return nil
			}
			data, err := r.readBlob(h)
			rd.bytes += int64(len(data))
			if err != nil {
				rd.blobs[i] = parsedBlob{done: true, err: err}
				continue
			}
			grant := min(max((len(data)+unit-1)/unit, 1), cap(tokens))
			for range grant {
				select {
				case tokens <- struct{}{}:
				case <-ctx.Done():
					rd.stopped = "stopped: " + ctx.Err().Error()
					return ctx.Err()
				}
			}
			select {
			case jobs <- job{i, data, grant}:
			case <-ctx.Done():
				rd.stopped = "stopped: " + ctx.Err().Error()
				return ctx.Err()
			}
		}
		return nil
	}()
	// The pool stops before its results are read: a job under way when
	// ctx is done stops at its next point.
	close(jobs)
	wg.Wait()
	if err == nil {
		err = ctx.Err()
		if err != nil {
			rd.stopped = "stopped: " + err.Error()
		}
	}
	return rd, err
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

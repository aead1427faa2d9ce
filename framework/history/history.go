// Package history reads every committed version of a baseline from a git
// repository and finds the commits that moved its figures.
//
// Baselines are committed, so git is the archive of every figure a suite
// ever gated on. History walks the first-parent line from HEAD (the
// branch as it was merged, not every side commit of every merged branch)
// and keeps each commit that changed the baseline file's contents.
package history

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/benchci/benchci/framework/baseline"
)

// Version is one committed version of a baseline.
type Version struct {
	Commit  string    `json:"commit"`
	Time    time.Time `json:"time"`
	Subject string    `json:"subject"`
	// Baseline is the file as that commit left it.
	Baseline *baseline.File `json:"-"`
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

// Versions returns the versions of the file at path (inside the
// repository) along HEAD's first-parent line, oldest first: one per
// commit that changed its contents. Versions that do not parse as a
// baseline are skipped, with the reason.
func (r *Repo) Versions(path string) ([]Version, []Skipped, error) {
	head, err := r.repo.Head()
	if err != nil {
		return nil, nil, fmt.Errorf("read HEAD: %w", err)
	}
	c, err := r.repo.CommitObject(head.Hash())
	if err != nil {
		return nil, nil, fmt.Errorf("read HEAD's commit: %w", err)
	}
	// Walk back to the root, noting the blob at each commit; a version
	// begins at the oldest commit of each run of one blob.
	type at struct {
		commit *object.Commit
		blob   plumbing.Hash
	}
	var line []at
	for c != nil {
		blob := plumbing.ZeroHash
		tree, err := c.Tree()
		if err != nil {
			return nil, nil, fmt.Errorf("read the tree of %s: %w", short(c.Hash.String()), err)
		}
		if e, err := tree.FindEntry(path); err == nil && e.Mode.IsFile() {
			blob = e.Hash
		}
		line = append(line, at{c, blob})
		if c.NumParents() == 0 {
			break
		}
		if c, err = c.Parent(0); err != nil {
			return nil, nil, fmt.Errorf("read a parent commit: %w", err)
		}
	}
	var versions []Version
	var skipped []Skipped
	var last plumbing.Hash
	for i := len(line) - 1; i >= 0; i-- {
		a := line[i]
		if a.blob == last {
			continue
		}
		last = a.blob
		if a.blob == plumbing.ZeroHash {
			continue // deleted here; a later commit may bring it back
		}
		v := Version{Commit: a.commit.Hash.String(), Time: a.commit.Committer.When, Subject: subject(a.commit.Message)}
		b, err := r.read(a.blob)
		if err != nil {
			skipped = append(skipped, Skipped{Commit: v.Commit, Reason: err.Error()})
			continue
		}
		v.Baseline = b
		versions = append(versions, v)
	}
	if len(versions) == 0 && len(skipped) == 0 {
		return nil, nil, fmt.Errorf("%s: %w", path, ErrNeverCommitted)
	}
	return versions, skipped, nil
}

// ErrNeverCommitted says no commit on the line holds the file.
var ErrNeverCommitted = errors.New("no commit on HEAD's first-parent line holds it")

func (r *Repo) read(h plumbing.Hash) (*baseline.File, error) {
	blob, err := r.repo.BlobObject(h)
	if err != nil {
		return nil, err
	}
	rd, err := blob.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	data, err := io.ReadAll(rd)
	if err != nil {
		return nil, err
	}
	return baseline.Parse(data)
}

func subject(msg string) string {
	s, _, _ := strings.Cut(strings.TrimSpace(msg), "\n")
	return s
}

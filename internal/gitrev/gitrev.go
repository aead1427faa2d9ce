// Package gitrev writes the tree of one revision of a git repository into
// a directory, so that a suite can be evaluated, imports and data files
// included, as it was at that revision (benchci ci --ab). A repository is
// input like any other: the tree written is bounded in files and bytes,
// and only regular files at local paths are written.
package gitrev

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/benchci/benchci/internal/safefile"
)

// Limits bound the tree written.
type Limits struct {
	MaxFiles int
	MaxBytes int64
}

// DefaultLimits are a repository of serving configs and suites, with
// room to spare: larger trees are refused, not written in part.
var DefaultLimits = Limits{MaxFiles: 50_000, MaxBytes: 512 << 20}

// Tree is a revision written out.
type Tree struct {
	// Root is the repository's work tree, whose relative paths Dir
	// mirrors; Dir holds the revision's files; Commit is the revision
	// resolved.
	Root, Dir, Commit string
	// links are the revision's symbolic links, by slash path, to their
	// targets: not written (a suite reads through none), but a path
	// through one names its target's file (throughLinks).
	links map[string]string
}

// maxLink bounds a link's target read from a revision.
const maxLink = 4096

// throughLinks rewrites rel (slash-separated, relative to the root)
// through the links lookup finds on its way, as a file system follows
// them: each prefix that is a link is replaced by its target, relative
// to the link's directory. ok is false for a target outside the
// repository, or a chain of more than 40 links.
func throughLinks(rel string, lookup func(string) (string, bool)) (string, bool) {
	parts := strings.Split(rel, "/")
	for i, hops := 0, 0; i < len(parts); i++ {
		prefix := strings.Join(parts[:i+1], "/")
		target, isLink := lookup(prefix)
		if !isLink {
			continue
		}
		next := path.Clean(path.Join(path.Dir(prefix), target))
		if hops++; hops > 40 || path.IsAbs(target) || next == ".." || strings.HasPrefix(next, "../") {
			return "", false
		}
		rest := path.Join(append([]string{next}, parts[i+1:]...)...)
		if rest == "." {
			return rest, true
		}
		parts = strings.Split(rest, "/")
		i = -1
	}
	return path.Clean(strings.Join(parts, "/")), true
}

// candidates are rels, each first as the revision's links lead it.
func candidates(rels []string, lookup func(string) (string, bool)) []string {
	var out []string
	for _, rel := range rels {
		if r, ok := throughLinks(filepath.ToSlash(rel), lookup); ok && !slices.Contains(out, filepath.FromSlash(r)) {
			out = append(out, filepath.FromSlash(r))
		}
		if !slices.Contains(out, rel) {
			out = append(out, rel)
		}
	}
	return out
}

// link is the target of the revision's link at the slash path l.
func (t *Tree) link(l string) (string, bool) {
	target, ok := t.links[l]
	return target, ok
}

// Linked reports whether rel (relative to the root) is, or lies through,
// one of the revision's symbolic links: its file in Dir is a copy of the
// link's target, not a file of its own.
func (t *Tree) Linked(rel string) bool {
	slash := filepath.ToSlash(rel)
	real, ok := throughLinks(slash, t.link)
	return !ok || real != path.Clean(slash)
}

// Path maps a path in the work tree (absolute, or relative to the
// working directory) to the same file in the revision written: the file
// the revision has at the path as written below the repository's root,
// where it has one, else at the path with its links resolved. A link
// inside the work tree (suites -> bench, kept for old paths) thus names
// what the revision had at suites/, not at bench/, which it may not have.
func (t *Tree) Path(p string) (string, error) {
	rels, err := t.rels(p)
	if err != nil {
		return "", err
	}
	for _, rel := range candidates(rels, t.link) {
		if _, err := os.Lstat(filepath.Join(t.Dir, rel)); err == nil {
			return filepath.Join(t.Dir, rel), nil
		}
	}
	return filepath.Join(t.Dir, rels[len(rels)-1]), nil
}

// rels are the paths relative to the root that p may name in a revision:
// as written below the root (links inside the work tree kept), then with
// its links resolved, where that differs.
func (t *Tree) rels(p string) ([]string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, err
	}
	root, err := filepath.EvalSymlinks(t.Root)
	if err != nil {
		return nil, err
	}
	var out []string
	for dir := abs; ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil && real == root {
			if rel, err := filepath.Rel(dir, abs); err == nil && filepath.IsLocal(rel) {
				out = append(out, rel)
			}
			break
		}
		if dir == filepath.Dir(dir) {
			break
		}
	}
	if real, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		abs = filepath.Join(real, filepath.Base(abs))
	}
	if rel, err := filepath.Rel(root, abs); err == nil && filepath.IsLocal(rel) && !slices.Contains(out, rel) {
		out = append(out, rel)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s is outside the repository at %s", p, t.Root)
	}
	return out, nil
}

// Write resolves rev (a branch, tag, commit or expression such as
// origin/main~1) in the repository holding dir and writes its tree into
// dest, which must exist and be empty.
func Write(dir, rev, dest string, lim Limits) (*Tree, error) {
	root, c, err := commitAt(dir, rev)
	if err != nil {
		return nil, err
	}
	h := &c.Hash
	tree, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("read the tree of %s: %w", h, err)
	}
	// Written inside dest through no link: the tree writes no links, and
	// dest is the caller's fresh directory, but a link found there is
	// refused, not followed.
	out, err := safefile.Open(dest)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	b := &budget{lim: lim, at: h.String()[:12]}
	links := map[string]string{}
	var written []*object.File
	err = tree.Files().ForEach(func(f *object.File) error {
		if f.Mode == filemode.Symlink {
			// Not written, but a path through it names its target; it
			// counts as a file of the tree.
			if target, ok := linkTarget(f); ok {
				links[f.Name] = target
			}
			return b.add(0, "")
		}
		if f.Mode != filemode.Regular && f.Mode != filemode.Executable && f.Mode != filemode.Deprecated {
			return nil // submodules: nothing a suite reads
		}
		if !filepath.IsLocal(filepath.FromSlash(f.Name)) {
			return fmt.Errorf("%q is not a local path", f.Name)
		}
		if err := b.add(f.Size, ""); err != nil {
			return err
		}
		written = append(written, f)
		return writeFile(out, filepath.FromSlash(f.Name), f)
	})
	if err == nil {
		err = copyThroughLinks(out, links, written, func(size int64) error { return b.add(size, " with its links' copies") })
	}
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", rev, err)
	}
	return &Tree{Root: root, Dir: dest, Commit: h.String(), links: links}, nil
}

// budget counts the files and bytes a written tree holds against its
// limits.
type budget struct {
	lim   Limits
	files int
	bytes int64
	at    string // the commit, to say which tree
}

// add counts one more file of size bytes; an error past a limit.
func (b *budget) add(size int64, what string) error {
	b.files++
	b.bytes += size
	if b.files > b.lim.MaxFiles || b.bytes > b.lim.MaxBytes {
		return fmt.Errorf("the tree at %s holds more than %d files or %d MiB%s: %w", b.at, b.lim.MaxFiles, b.lim.MaxBytes>>20, what, ErrTooLarge)
	}
	return nil
}

// Root is the work-tree root of the git repository holding dir.
func Root(dir string) (string, error) {
	_, wt, err := open(dir)
	if err != nil {
		return "", err
	}
	return wt.Filesystem.Root(), nil
}

// Resolve resolves rev in the repository holding dir, returning the
// repository's work-tree root and the commit's hash.
func Resolve(dir, rev string) (root, commit string, err error) {
	root, c, err := commitAt(dir, rev)
	if err != nil {
		return "", "", err
	}
	return root, c.Hash.String(), nil
}

// largeObject is the size above which a blob is read from its object
// file or pack as it is written out, never held in memory whole; smaller
// objects (trees, commits, most files) are read whole and cached.
const largeObject = 1 << 20

// objectCache bounds the objects held in memory between reads.
const objectCache = 16 * cache.MiByte

// open opens the repository holding dir so that large blobs stream: a
// revision's tree is bounded in bytes written, and memory must not be a
// multiple of its largest file.
func open(dir string) (*git.Repository, *git.Worktree, error) {
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		return nil, nil, fmt.Errorf("open the git repository at %s: %w", dir, err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		return nil, nil, fmt.Errorf("open the git repository at %s: %w", dir, err)
	}
	fs, ok := repo.Storer.(*filesystem.Storage)
	if !ok {
		return repo, wt, nil
	}
	st := filesystem.NewStorageWithOptions(fs.Filesystem(), cache.NewObjectLRU(objectCache), filesystem.Options{LargeObjectThreshold: largeObject})
	if repo, err = git.Open(st, wt.Filesystem); err != nil {
		return nil, nil, fmt.Errorf("open the git repository at %s: %w", dir, err)
	}
	if wt, err = repo.Worktree(); err != nil {
		return nil, nil, fmt.Errorf("open the git repository at %s: %w", dir, err)
	}
	return repo, wt, nil
}

// commitAt opens the repository holding dir and resolves rev in it,
// returning its work tree's root and the commit.
func commitAt(dir, rev string) (string, *object.Commit, error) {
	repo, wt, err := open(dir)
	if err != nil {
		return "", nil, err
	}
	h, err := repo.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return "", nil, fmt.Errorf("resolve %q: %w (is it fetched? actions/checkout needs fetch-depth: 0 or the base ref fetched)", rev, err)
	}
	c, err := repo.CommitObject(*h)
	if err != nil {
		return "", nil, fmt.Errorf("read commit %s: %w", h, err)
	}
	return wt.Filesystem.Root(), c, nil
}

// ErrTooLarge is a revision whose tree exceeds the limits.
var ErrTooLarge = errors.New("too large")

// writeFile streams the blob f to name in out: a large blob is read from
// its object file or pack as it is written, never held whole in memory.
func writeFile(out *safefile.Dir, name string, f *object.File) error {
	r, err := f.Reader()
	if err != nil {
		return err
	}
	defer r.Close()
	w, err := out.Create(name, os.O_EXCL)
	if err != nil {
		return err
	}
	// The blob's size was counted; a blob that reads longer is cut there.
	if _, err := io.Copy(w, io.LimitReader(r, f.Size)); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// ReadFile reads the file at path (in the work tree of the repository
// holding it: absolute, or relative to the working directory) as it is at
// rev, if it is a regular file of at most max bytes. The commit rev
// resolved to is returned too. A file absent at rev is os.ErrNotExist.
func ReadFile(path, rev string, max int64) ([]byte, string, error) {
	root, c, err := commitAt(filepath.Dir(path), rev)
	if err != nil {
		return nil, "", err
	}
	h := c.Hash
	rels, err := (&Tree{Root: root}).rels(path)
	if err != nil {
		return nil, "", err
	}
	ct, err := c.Tree()
	if err != nil {
		return nil, "", fmt.Errorf("read the tree of %s: %w", h, err)
	}
	lookup := func(p string) (string, bool) {
		e, err := ct.FindEntry(p)
		if err != nil || e.Mode != filemode.Symlink {
			return "", false
		}
		f, err := ct.TreeEntryFile(e)
		if err != nil {
			return "", false
		}
		return linkTarget(f)
	}
	var rel string
	var f *object.File
	for _, rel = range candidates(rels, lookup) {
		if f, err = c.File(filepath.ToSlash(rel)); !errors.Is(err, object.ErrFileNotFound) && (err != nil || f.Mode != filemode.Symlink) {
			break
		}
	}
	if errors.Is(err, object.ErrFileNotFound) {
		return nil, h.String(), fmt.Errorf("%s at %s: %w", rel, rev, os.ErrNotExist)
	}
	if err != nil {
		return nil, "", fmt.Errorf("read %s at %s: %w", rel, rev, err)
	}
	if f.Mode != filemode.Regular && f.Mode != filemode.Executable && f.Mode != filemode.Deprecated {
		return nil, "", fmt.Errorf("%s at %s is not a regular file", rel, rev)
	}
	if f.Size > max {
		return nil, "", fmt.Errorf("%s at %s is %d bytes, more than %d: %w", rel, rev, f.Size, max, ErrTooLarge)
	}
	r, err := f.Reader()
	if err != nil {
		return nil, "", err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, max))
	if err != nil {
		return nil, "", err
	}
	return data, h.String(), nil
}

// copyThroughLinks writes, at each link of the revision, a copy of what
// it leads to inside the revision (a file, or a directory's files), so
// that a suite that imports through a link evaluates from the written
// tree as from a checkout. No link is written: a copy cannot lead out of
// the tree. count is called with each copy's size, to bound the tree.
func copyThroughLinks(out *safefile.Dir, links map[string]string, written []*object.File, count func(int64) error) error {
	lookup := func(l string) (string, bool) { target, ok := links[l]; return target, ok }
	for _, link := range slices.Sorted(maps.Keys(links)) {
		target, ok := throughLinks(link, lookup)
		if !ok || target == "." {
			continue
		}
		for _, f := range written {
			var at string
			switch {
			case f.Name == target:
				at = link
			case strings.HasPrefix(f.Name, target+"/"):
				at = link + f.Name[len(target):]
			default:
				continue
			}
			if err := count(f.Size); err != nil {
				return err
			}
			if err := writeFile(out, filepath.FromSlash(at), f); err != nil && !errors.Is(err, os.ErrExist) {
				return err
			}
		}
	}
	return nil
}

// linkTarget is the target a symbolic link of a revision names.
func linkTarget(f *object.File) (string, bool) {
	if f.Size > maxLink {
		return "", false
	}
	target, err := f.Contents()
	return target, err == nil && target != ""
}

package suitefile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/benchci/benchci/internal/inputfile"
)

// A pull request's suite is untrusted code: a fork can write any Jsonnet
// it likes, and what the suite reads ends up in results, reports and PR
// comments. So a suite reads only files in its repository: its imports
// and the data files it names resolve inside one root directory, and are
// regular files (or, for an image directory, a directory) once every
// link is followed. /proc/self/environ, /dev/zero, a FIFO that would hang
// the evaluation, or a link to ~/.ssh are refused before a byte is read.

// ErrOutside is the reason every refusal gives.
var ErrOutside = errors.New("a suite reads only files in its repository")

// findRoot returns the repository root of the suite at path: the nearest
// directory at or above the suite's own that holds .git (a directory, or
// a file in a worktree or submodule), else the suite's own directory.
func findRoot(path string) (string, error) {
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return "", fmt.Errorf("find the repository of %s: %w", path, err)
	}
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, nil
		}
		up := filepath.Dir(d)
		if up == d {
			return dir, nil
		}
		d = up
	}
}

// confinement is one repository root, as spelled and with its links
// resolved: a path is checked by its spelling before anything is looked
// up (so nothing outside is even probed), and by what it resolves to.
type confinement struct {
	root, real string
}

func newConfinement(root string) (*confinement, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("repository root %s: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("repository root %s: %w", root, err)
	}
	return &confinement{root: abs, real: real}, nil
}

// within reports whether path is dir or below it (both absolute, clean).
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// contains reports whether the absolute path is in the root, by its
// spelling: either spelling of the root counts (/tmp and /private/tmp).
func (c *confinement) contains(abs string) bool {
	return within(c.root, abs) || within(c.real, abs)
}

// errClimbs is a name that leaves the root by its spelling alone; an
// importer tries the next directory on such a name, as on a missing one.
var errClimbs = errors.New("climbs out of the repository")

// file checks name, as a suite wrote it, relative to dir: it must be
// relative, stay in the root when spelled out and when its links are
// followed, and be a regular file (a directory when wantDir). It returns
// the path with links resolved, which is the one to read. A missing file
// is an error that wraps os.ErrNotExist.
func (c *confinement) file(dir, name string, wantDir bool) (string, error) {
	if filepath.IsAbs(name) {
		return "", fmt.Errorf("%q is an absolute path, outside the repository (%s); %w", name, c.root, ErrOutside)
	}
	abs, err := filepath.Abs(filepath.Join(dir, name))
	if err != nil {
		return "", fmt.Errorf("%q: %w", name, err)
	}
	if !c.contains(abs) {
		return "", fmt.Errorf("%q %w (%s); %w", name, errClimbs, c.root, ErrOutside)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("%q: %w", name, err)
	}
	if !within(c.real, real) {
		return "", fmt.Errorf("%q links to %s, outside the repository (%s); %w", name, real, c.root, ErrOutside)
	}
	// Lstat of a path without links: what it is, not what it names.
	st, err := os.Lstat(real)
	if err != nil {
		return "", fmt.Errorf("%q: %w", name, err)
	}
	switch {
	case wantDir && st.IsDir(), !wantDir && st.Mode().IsRegular():
		return real, nil
	case wantDir:
		return "", fmt.Errorf("%q is %s, not a directory; %w", name, inputfile.Describe(st.Mode()), ErrOutside)
	}
	return "", fmt.Errorf("%q is %s, not a regular file; %w", name, inputfile.Describe(st.Mode()), ErrOutside)
}

// dir checks an import directory (a --jpath) given by the person running
// benchci: it must be in the root, or a suite could import through it.
func (c *confinement) dir(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("import directory %s: %w", path, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return fmt.Errorf("import directory %s: %w", path, err)
	}
	if !c.contains(abs) || !within(c.real, real) {
		return fmt.Errorf("import directory %s is outside the repository (%s); %w", path, c.root, ErrOutside)
	}
	return nil
}

// Package safefile creates files inside a directory without following
// links. A repository is input like any other: a results, baselines or
// suites directory (or a file in one) that is a symbolic link must not
// make benchci write somewhere else. The directory named is opened once
// (following links, as its user named it); every path below it is
// resolved inside it (os.Root), and a link met on the way, even one that
// stays inside, is refused with its path.
package safefile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrLink is a symbolic link where a file, or a directory above it, was
// to be written.
var ErrLink = errors.New("is a symbolic link; benchci does not write through links")

// LinkError is ErrLink at Path, the link's path.
type LinkError struct{ Path string }

func (e *LinkError) Error() string { return e.Path + " " + ErrLink.Error() }

// Unwrap makes errors.Is(err, ErrLink) hold.
func (e *LinkError) Unwrap() error { return ErrLink }

// Dir is a directory files are written in.
type Dir struct {
	root *os.Root
	path string
}

// Open makes dir if needed and opens it for writing files in.
func Open(dir string) (*Dir, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &Dir{root: r, path: dir}, nil
}

// Close closes the directory.
func (d *Dir) Close() error { return d.root.Close() }

// Path is name's path outside: dir joined with it.
func (d *Dir) Path(name string) string { return filepath.Join(d.path, name) }

// clean checks that name is a local path and returns it cleaned.
func (d *Dir) clean(name string) (string, error) {
	n := filepath.Clean(filepath.FromSlash(name))
	if !filepath.IsLocal(n) {
		return "", fmt.Errorf("%s is not inside %s", name, d.path)
	}
	return n, nil
}

// Check refuses name when it, or a directory on the way to it, is a
// symbolic link: the error is a *LinkError, with the link's path. A name (or directory) that does not exist yet is fine.
func (d *Dir) Check(name string) error {
	n, err := d.clean(name)
	if err != nil {
		return err
	}
	parts := strings.Split(n, string(filepath.Separator))
	for i := range parts {
		p := filepath.Join(parts[:i+1]...)
		fi, err := d.root.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return &LinkError{Path: d.Path(p)}
		}
	}
	return nil
}

// Exists says whether name exists, not following a link: a link there is
// refused as by Check.
func (d *Dir) Exists(name string) (bool, error) {
	if err := d.Check(name); err != nil {
		return false, err
	}
	n, _ := d.clean(name)
	_, err := d.root.Lstat(n)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// MkdirAll makes the directory name and those above it inside d.
func (d *Dir) MkdirAll(name string) error {
	if err := d.Check(name); err != nil {
		return err
	}
	n, _ := d.clean(name)
	if n == "." {
		return nil
	}
	return d.root.MkdirAll(n, 0o755)
}

// Create opens name for writing (flag adds os.O_EXCL, os.O_TRUNC or
// os.O_APPEND to O_WRONLY|O_CREATE), making the directories above it.
func (d *Dir) Create(name string, flag int) (*os.File, error) {
	n, err := d.clean(name)
	if err != nil {
		return nil, err
	}
	if err := d.MkdirAll(filepath.Dir(n)); err != nil {
		return nil, err
	}
	if err := d.Check(n); err != nil {
		return nil, err
	}
	return d.root.OpenFile(n, os.O_WRONLY|os.O_CREATE|flag, 0o644)
}

// WriteAtomic writes name through a temporary file beside it, synced and
// then renamed over it, so that a crash or a full disk never leaves a
// half-written file where a good one was. write fills the temporary
// file. A link at name is refused, not replaced: it may be the user's.
func (d *Dir) WriteAtomic(name string, write func(*os.File) error) error {
	n, err := d.clean(name)
	if err != nil {
		return err
	}
	if err := d.MkdirAll(filepath.Dir(n)); err != nil {
		return err
	}
	if err := d.Check(n); err != nil {
		return err
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	tmpName := filepath.Join(filepath.Dir(n), "."+filepath.Base(n)+"."+hex.EncodeToString(rnd[:])+".tmp")
	tmp, err := d.root.OpenFile(tmpName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	cleanup := func(err error) error {
		tmp.Close()
		d.root.Remove(tmpName)
		return err
	}
	if err := write(tmp); err != nil {
		return cleanup(err)
	}
	if err := tmp.Sync(); err != nil {
		return cleanup(err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return cleanup(err)
	}
	if err := tmp.Close(); err != nil {
		return cleanup(err)
	}
	if err := d.root.Rename(tmpName, n); err != nil {
		d.root.Remove(tmpName)
		return err
	}
	return nil
}

// WriteFile writes data to name atomically, as WriteAtomic.
func (d *Dir) WriteFile(name string, data []byte) error {
	return d.WriteAtomic(name, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// WriteFile writes data to name inside dir atomically, following no link
// below dir.
func WriteFile(dir, name string, data []byte) error {
	d, err := Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.WriteFile(name, data)
}

// In is path relative to dir, which it must be inside of (path joined
// from dir, or relative to the same working directory).
func In(dir, path string) (string, error) {
	rel, err := filepath.Rel(dir, path)
	if err != nil || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%s is not inside %s", path, dir)
	}
	return rel, nil
}

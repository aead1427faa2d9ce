// Package inputfile opens files that come from outside (results, shards,
// baselines, traces, datasets, images) as hostile: regular files only,
// never blocking on a FIFO or a device, refused by size before a byte is
// read, and read through a limit that holds even if the file grows.
package inputfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// ErrTooLarge is returned for a file over the limit its reader set.
var ErrTooLarge = errors.New("file too large")

// ErrNotRegular is returned for a FIFO, device, socket or directory.
var ErrNotRegular = errors.New("only regular files are read")

// Open opens path for reading if it is a regular file of at most max
// bytes. It opens without blocking (a FIFO would otherwise wait for a
// writer forever) and checks the descriptor it opened, not the name, so a
// file swapped in between cannot slip through. The reader it returns stops
// at max+1 bytes, so a file that grows after the check is still refused.
func Open(path string, max int64) (*File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file: it is %s (%w)", path, Describe(st.Mode()), ErrNotRegular)
	}
	if st.Size() > max {
		f.Close()
		return nil, fmt.Errorf("%s is %s, more than the %s it may be: %w", path, Size(st.Size()), Size(max), ErrTooLarge)
	}
	grew := fmt.Errorf("%s grew past the %s it may be while it was read: %w", path, Size(max), ErrTooLarge)
	return &File{f: f, r: LimitReader(f, max, grew), size: st.Size()}, nil
}

// File is an opened input file.
type File struct {
	f    *os.File
	r    io.Reader
	size int64
}

// Size is the file's size when it was opened.
func (f *File) Size() int64 { return f.size }

// Read reads from the file, failing with ErrTooLarge past the limit.
func (f *File) Read(p []byte) (int, error) { return f.r.Read(p) }

// LimitReader reads r and fails with err once more than max bytes came:
// unlike io.LimitReader, input cut at the limit is an error, never read
// as if it ended there (a cut line of a metric reads as another number,
// a cut JSON file as a corrupt one).
func LimitReader(r io.Reader, max int64, err error) io.Reader {
	return &limited{r: r, left: max, err: err}
}

type limited struct {
	r    io.Reader
	left int64
	err  error
}

func (l *limited) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, l.err
	}
	// One byte past the limit is read to tell a body that ends there
	// from one that goes on.
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	if l.left -= int64(n); l.left < 0 {
		return n + int(l.left), l.err
	}
	return n, err
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// ReadFile reads all of path if it is a regular file of at most max bytes.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := Open(path, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var b bytes.Buffer
	b.Grow(int(f.size) + bytes.MinRead)
	if _, err := b.ReadFrom(f); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Describe names a file's kind for a person: "a directory", "a named
// pipe", "a device"; callers that refuse a file say what it was.
func Describe(m os.FileMode) string {
	switch {
	case m.IsRegular():
		return "a regular file"
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "of type " + m.Type().String()
}

// Size writes a byte count for a person: "64 MiB", "300 KiB", "12 B".
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

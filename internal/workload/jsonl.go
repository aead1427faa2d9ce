package workload

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/benchci/benchci/internal/inputfile"
)

// maxLineErrors bounds the bad lines one data file reports.
const maxLineErrors = 20

// lineError is one bad line of a data file.
type lineError struct {
	line int
	err  error
}

// lineErrors are a data file's bad lines, in order: every one up to
// maxLineErrors, so that a file is fixed in one pass rather than a line
// per run.
type lineErrors struct {
	errs []lineError
	more bool // further bad lines were not kept
}

// Error is "12: msg", a line per bad line (the file's path is the
// caller's to add: see atFile).
func (e *lineErrors) Error() string { return e.format("") }

func (e *lineErrors) format(prefix string) string {
	parts := make([]string, len(e.errs))
	for i, le := range e.errs {
		parts[i] = fmt.Sprintf("%s%d: %v", prefix, le.line, le.err)
	}
	s := strings.Join(parts, "\n")
	if e.more {
		s += fmt.Sprintf("\n%s: more bad lines after the first %d not shown", strings.TrimSuffix(prefix, ":"), maxLineErrors)
	}
	return s
}

func (e *lineErrors) Unwrap() []error {
	out := make([]error, len(e.errs))
	for i, le := range e.errs {
		out[i] = le.err
	}
	return out
}

// pathError puts a data file's path before each of its bad lines.
type pathError struct {
	path string
	err  error
}

func (e *pathError) Error() string {
	var le *lineErrors
	if errors.As(e.err, &le) {
		return le.format(e.path + ":")
	}
	return e.path + ":" + e.err.Error()
}

func (e *pathError) Unwrap() error { return e.err }

// atFile names the file an error from eachLine came from: "path:12: msg",
// a line per bad line.
func atFile(path string, err error) error { return &pathError{path, err} }

// maxPromptLine bounds a dataset's line (a long prompt: MaxTokens tokens
// of text, escaped, fit).
const maxPromptLine = 64 << 20

// stop marks a line's error after which the rest of the file is not
// read: a bound on the whole file (its entries, its text) was passed, and
// every later line would pass it too.
type stop struct{ error }

func (e stop) Unwrap() error { return e.error }

// eachLine calls f with every non-blank line of a JSONL stream, lines of
// at most maxLine bytes. Every line f rejects is reported, up to
// maxLineErrors, each with its 1-based number, as "12: msg"; a line
// rejected with a stop error is the last read. The stream is read a line
// at a time: memory does not grow with the file.
func eachLine(r io.Reader, maxLine int, f func(line []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, min(64<<10, maxLine)), maxLine)
	var bad lineErrors
	n := 1
	for ; sc.Scan(); n++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if err := f(b); err != nil {
			if len(bad.errs) == maxLineErrors {
				bad.more = true
				break
			}
			bad.errs = append(bad.errs, lineError{n, err})
			if errors.As(err, new(stop)) {
				break
			}
		}
	}
	err := sc.Err()
	if errors.Is(err, bufio.ErrTooLong) && len(bad.errs) < maxLineErrors {
		bad.errs = append(bad.errs, lineError{n, fmt.Errorf("a line longer than %s", inputfile.Size(int64(maxLine)))})
		err = nil
	}
	if len(bad.errs) > 0 {
		return &bad
	}
	if err != nil {
		return fmt.Errorf(" %w", err)
	}
	return nil
}

package workload

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
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

// eachLine calls f with every non-blank line of a JSONL stream. Lines may
// be up to 64 MiB (long prompts). Every line f rejects is reported, up to
// maxLineErrors, each with its 1-based number, as "12: msg".
func eachLine(r io.Reader, f func(line []byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	var bad lineErrors
	for n := 1; sc.Scan(); n++ {
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
		}
	}
	if len(bad.errs) > 0 {
		return &bad
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf(" %w", err)
	}
	return nil
}

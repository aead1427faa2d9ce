package client

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// ErrLineTooLong reports an SSE line longer than the reader's limit.
var ErrLineTooLong = errors.New("sse: line too long")

// EventReader reads the data of Server-Sent Events
// (https://html.spec.whatwg.org/multipage/server-sent-events.html).
// It keeps only what the benchmark needs: data fields, joined with "\n" when
// an event has several; comments (":" keep-alives), event, id and retry
// fields are skipped. A line longer than the limit is an error, so a hostile
// stream cannot grow memory without bound.
type EventReader struct {
	r       *bufio.Reader
	maxLine int
	line    []byte // a line that spans buffer refills
	data    []byte
	hasData bool
	// skipLF: the last line ended with \r at the end of the buffer; a \n
	// first on the next read belongs to that terminator.
	skipLF bool
}

// NewEventReader reads events from r; lines may be at most maxLine bytes.
func NewEventReader(r *bufio.Reader, maxLine int) *EventReader {
	return &EventReader{r: r, maxLine: maxLine}
}

// Next returns the data of the next event. The slice is valid until the next
// call. At the end of the stream it returns any pending event first, then
// io.EOF; a stream cut inside a line returns io.ErrUnexpectedEOF.
func (e *EventReader) Next() ([]byte, error) {
	for {
		line, err := e.readLine()
		if err != nil {
			if err == io.EOF && e.hasData {
				// Servers that omit the final blank line still meant it.
				e.hasData = false
				return e.data, nil
			}
			return nil, err
		}
		if len(line) == 0 {
			if e.hasData {
				e.hasData = false
				return e.data, nil
			}
			continue
		}
		if line[0] == ':' {
			continue // comment, e.g. a keep-alive
		}
		name, value, found := bytes.Cut(line, []byte{':'})
		if found && len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		if string(name) != "data" {
			continue // event, id, retry and unknown fields
		}
		if !e.hasData {
			e.data = append(e.data[:0], value...)
			e.hasData = true
		} else {
			e.data = append(e.data, '\n')
			e.data = append(e.data, value...)
		}
	}
}

// readLine returns the next line without its terminator: \n, \r\n or a
// lone \r, as the SSE specification allows. A \r ends its line at once
// (waiting to see whether \n follows would hold an event back until the
// next one arrives); a \n that then comes first on the next read is
// skipped. The returned slice is valid until the next read.
func (e *EventReader) readLine() ([]byte, error) {
	e.line = e.line[:0]
	for {
		n := e.r.Buffered()
		if n == 0 {
			if _, err := e.r.Peek(1); err != nil {
				switch {
				case err != io.EOF:
					return nil, err
				case len(e.line) == 0:
					return nil, io.EOF
				case len(e.line) > e.maxLine:
					return nil, ErrLineTooLong
				}
				// A last line without a terminator: the stream ended mid-line.
				return nil, io.ErrUnexpectedEOF
			}
			n = e.r.Buffered()
		}
		buf, _ := e.r.Peek(n)
		if e.skipLF {
			e.skipLF = false
			if buf[0] == '\n' {
				e.r.Discard(1)
				continue
			}
		}
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			i = len(buf)
		}
		if j := bytes.IndexByte(buf[:i], '\r'); j >= 0 {
			i = j
		}
		if i == len(buf) {
			// No terminator buffered yet. While the buffer has room, let it
			// read more behind what it holds (no copy); a full buffer's
			// bytes are kept aside and the buffer reused.
			if n < e.r.Size() && len(e.line)+n <= e.maxLine {
				if _, err := e.r.Peek(n + 1); err == nil {
					continue
				}
				// The stream ended (or failed) mid-line: the next Peek(1)
				// reports it once the bytes are kept aside.
			}
			e.line = append(e.line, buf...)
			e.r.Discard(n)
			if len(e.line) > e.maxLine {
				return nil, ErrLineTooLong
			}
			continue
		}
		end := i + 1
		if buf[i] == '\r' {
			if i+1 < n {
				if buf[i+1] == '\n' {
					end++
				}
			} else {
				e.skipLF = true
			}
		}
		line := buf[:i]
		if len(e.line) > 0 {
			e.line = append(e.line, line...)
			line = e.line
		}
		if len(line) > e.maxLine {
			return nil, ErrLineTooLong
		}
		// Discard leaves the buffer's bytes in place until the next fill,
		// so line stays valid until the next read: no copy on the fast path.
		e.r.Discard(end)
		return line, nil
	}
}

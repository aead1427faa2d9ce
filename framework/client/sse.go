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
}

// NewEventReader reads events from r; lines may be at most maxLine bytes.
func NewEventReader(r *bufio.Reader, maxLine int) *EventReader {
	return &EventReader{r: r, maxLine: maxLine}
}

// Reset reuses the reader for a new stream.
func (e *EventReader) Reset(r *bufio.Reader) {
	e.r = r
	e.line = e.line[:0]
	e.data = e.data[:0]
	e.hasData = false
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

// readLine returns the next line without its terminator (\n, \r\n or \r
// followed by \n; a lone \r inside a line is kept, which no OpenAI-style
// server sends).
func (e *EventReader) readLine() ([]byte, error) {
	e.line = e.line[:0]
	for {
		frag, err := e.r.ReadSlice('\n')
		if err == nil {
			if len(e.line) == 0 {
				// Fast path: the whole line is in the buffer.
				if len(frag) > e.maxLine+2 {
					return nil, ErrLineTooLong
				}
				return trimEOL(frag), nil
			}
			e.line = append(e.line, frag...)
			if len(e.line) > e.maxLine+2 {
				return nil, ErrLineTooLong
			}
			return trimEOL(e.line), nil
		}
		if err == bufio.ErrBufferFull {
			e.line = append(e.line, frag...)
			if len(e.line) > e.maxLine {
				return nil, ErrLineTooLong
			}
			continue
		}
		e.line = append(e.line, frag...)
		if err == io.EOF {
			if len(e.line) == 0 {
				return nil, io.EOF
			}
			if len(e.line) > e.maxLine {
				return nil, ErrLineTooLong
			}
			// A last line without a terminator: the stream ended mid-line.
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
}

func trimEOL(b []byte) []byte {
	b = b[:len(b)-1]
	if len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	return b
}

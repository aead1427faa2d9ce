// Package promtext reads the Prometheus text exposition format, as
// hardware exporters (DCGM, AMD's, node_exporter) serve it, under bounds.
// What an exporter serves is read as hostile: a text past a bound in
// bytes, lines, line length or series fails whole (*LimitError), rather
// than being cut at the bound and read as if complete (a line cut short
// reads as another number). Comments, TYPE lines included, are skipped:
// every sample is read under its own name.
package promtext

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/benchci/benchci/internal/inputfile"
)

// Bounds on one text.
const (
	// MaxBytes bounds the text read. DCGM's exporter serves some 100 KB
	// for 8 GPUs, node_exporter a few MB on a large host.
	MaxBytes = 16 << 20
	// MaxSeries bounds the samples one text may hold, all names
	// together: node_exporter on a large host serves some tens of
	// thousands.
	MaxSeries = 100_000
	// maxLines bounds the lines, comments included (each family has its
	// HELP and TYPE); maxLine the length of one.
	maxLines = 4 * MaxSeries
	maxLine  = 64 << 10
)

// LimitError is a text that went past a bound.
type LimitError struct{ Msg string }

func (e *LimitError) Error() string { return e.Msg }

// Series is one metric in one exposition: its sum, count and extremes
// over label sets, the count of samples that were not numbers (NaN, ±Inf,
// left out of the rest), and, for the names asked for per label set, each
// label set's value (keyed by a hash of its name and labels).
type Series struct {
	Sum, Min, Max float64
	N, Bad        int
	ByLabels      map[uint64]float64
}

// Parse reads the Prometheus text format, keeping the names in want (the
// value: keep each label set's value too). Every sample counts against
// MaxSeries and every line against the line bounds, kept or not. A label
// set served twice for a name counts once, at its first value. A text
// past a bound fails whole with a *LimitError.
func Parse(r io.Reader, want map[string]bool) (map[string]Series, error) {
	br := bufio.NewReaderSize(inputfile.LimitReader(r, MaxBytes, &LimitError{fmt.Sprintf("more than the %d MiB a scrape may be", MaxBytes>>20)}), maxLine)
	out := map[string]Series{}
	seen := map[uint64]bool{}
	samples := 0
	var pairs [][2][]byte
	for lines := 1; ; lines++ {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, &LimitError{fmt.Sprintf("line %d is longer than %d KiB", lines, maxLine>>10)}
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		if lines > maxLines && len(line) > 0 {
			return nil, &LimitError{fmt.Sprintf("more than %d lines", maxLines)}
		}
		name, labels, v, ok, perr := parseLine(line, pairs[:0])
		if perr != nil {
			return nil, fmt.Errorf("line %d: %w", lines, perr)
		}
		if ok {
			if samples++; samples > MaxSeries {
				return nil, &LimitError{fmt.Sprintf("more than %d series", MaxSeries)}
			}
			pairs = labels
			if perLabel, kept := want[string(name)]; kept {
				key := labelKey(name, labels)
				if !seen[key] {
					seen[key] = true
					s := out[string(name)]
					s.add(key, v, perLabel)
					out[string(name)] = s
				}
			}
		}
		if err == io.EOF {
			return out, nil
		}
	}
}

func (s *Series) add(key uint64, v float64, perLabel bool) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		s.Bad++
		return
	}
	if s.N == 0 {
		s.Min, s.Max = v, v
	}
	s.Sum += v
	s.Min, s.Max = min(s.Min, v), max(s.Max, v)
	s.N++
	if perLabel {
		if s.ByLabels == nil {
			s.ByLabels = map[uint64]float64{}
		}
		s.ByLabels[key] = v
	}
}

// labelKey identifies a series: its name and its labels, in any order.
func labelKey(name []byte, labels [][2][]byte) uint64 {
	slices.SortFunc(labels, func(a, b [2][]byte) int { return bytes.Compare(a[0], b[0]) })
	h := fnv.New64a()
	h.Write(name)
	for _, l := range labels {
		h.Write([]byte{0})
		h.Write(l[0])
		h.Write([]byte{'='})
		h.Write(l[1]) // as quoted, escapes and all: one value, one spelling
	}
	return h.Sum64()
}

// parseLine reads one line of the text format: a sample (name, its
// labels appended to labels as name and quoted value, value; ok), or a
// comment or blank line (not ok).
//
//	name{label="value",...} value [timestamp]
func parseLine(line []byte, labels [][2][]byte) (name []byte, _ [][2][]byte, v float64, ok bool, err error) {
	i := skipBlanks(line, 0)
	if i == len(line) || line[i] == '#' || line[i] == '\n' || line[i] == '\r' {
		return nil, nil, 0, false, nil
	}
	start := i
	for i < len(line) && nameByte(line[i], i > start) {
		i++
	}
	if i == start {
		return nil, nil, 0, false, fmt.Errorf("no metric name at %q", clip(line[start:]))
	}
	name = line[start:i]
	i = skipBlanks(line, i)
	if i < len(line) && line[i] == '{' {
		if i, labels, err = readLabels(line, i+1, labels); err != nil {
			return nil, nil, 0, false, err
		}
		i = skipBlanks(line, i)
	}
	tok, i := token(line, i)
	if len(tok) == 0 {
		return nil, nil, 0, false, fmt.Errorf("%s has no value", clip(name))
	}
	v, err = strconv.ParseFloat(string(tok), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) { // out of range: ±Inf or 0, not a number to keep
		return nil, nil, 0, false, fmt.Errorf("%s: value %q is not a number", clip(name), clip(tok))
	}
	if ts, j := token(line, skipBlanks(line, i)); len(ts) > 0 {
		if _, err := strconv.ParseInt(string(ts), 10, 64); err != nil {
			return nil, nil, 0, false, fmt.Errorf("%s: timestamp %q is not an integer", clip(name), clip(ts))
		}
		i = j
	}
	if i = skipBlanks(line, i); i < len(line) && line[i] != '\n' && line[i] != '\r' {
		return nil, nil, 0, false, fmt.Errorf("%s: unexpected %q after the value", clip(name), clip(line[i:]))
	}
	return name, labels, v, true, nil
}

// readLabels reads a label set from just after its '{' to just after its
// '}', appending its labels.
func readLabels(line []byte, i int, labels [][2][]byte) (int, [][2][]byte, error) {
	for {
		i = skipBlanks(line, i)
		if i < len(line) && line[i] == '}' {
			return i + 1, labels, nil
		}
		start := i
		for i < len(line) && labelByte(line[i], i > start) {
			i++
		}
		if i == start {
			return 0, nil, fmt.Errorf("bad label name at %q", clip(line[start:]))
		}
		label := line[start:i]
		if i = skipBlanks(line, i); i >= len(line) || line[i] != '=' {
			return 0, nil, fmt.Errorf("label %s has no '='", clip(label))
		}
		if i = skipBlanks(line, i+1); i >= len(line) || line[i] != '"' {
			return 0, nil, fmt.Errorf("label %s has no quoted value", clip(label))
		}
		open := i
		for i++; ; i++ {
			if i >= len(line) || line[i] == '\n' {
				return 0, nil, errors.New("unterminated label value")
			}
			if line[i] == '\\' {
				if i+1 >= len(line) || (line[i+1] != '\\' && line[i+1] != '"' && line[i+1] != 'n') {
					return 0, nil, errors.New(`bad escape in a label value (\\, \" and \n only)`)
				}
				i++
				continue
			}
			if line[i] == '"' {
				i++
				break
			}
		}
		labels = append(labels, [2][]byte{label, line[open:i]})
		switch i = skipBlanks(line, i); {
		case i < len(line) && line[i] == ',':
			i++
		case i < len(line) && line[i] == '}':
		default:
			return 0, nil, errors.New("label set not closed")
		}
	}
}

func skipBlanks(line []byte, i int) int {
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	return i
}

// token is the run of non-blank bytes at i, and the index after it.
func token(line []byte, i int) ([]byte, int) {
	start := i
	for i < len(line) && line[i] != ' ' && line[i] != '\t' && line[i] != '\n' && line[i] != '\r' {
		i++
	}
	return line[start:i], i
}

func nameByte(c byte, notFirst bool) bool {
	return c == '_' || c == ':' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || notFirst && '0' <= c && c <= '9'
}

func labelByte(c byte, notFirst bool) bool {
	return c != ':' && nameByte(c, notFirst)
}

// clip cuts text from an exporter for an error message.
func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

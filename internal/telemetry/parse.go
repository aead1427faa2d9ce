package telemetry

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/benchci/benchci/internal/inputfile"
)

// Bounds on one scrape. An exporter is a program on the machine under
// test, and whatever it serves is read as hostile: a scrape past any of
// these fails whole, rather than being cut at the bound and read as if
// complete (a line cut short reads as another number).
const (
	// MaxScrapeBytes bounds the exposition text read per scrape. DCGM's
	// exporter serves some 100 KB for 8 GPUs, node_exporter a few MB on
	// a large host.
	MaxScrapeBytes = 16 << 20
	// MaxSeries bounds the samples one scrape may hold, all names
	// together: node_exporter on a large host serves some tens of
	// thousands.
	MaxSeries = 100_000
	// maxLines bounds the lines, comments included (each family has its
	// HELP and TYPE); maxLine the length of one.
	maxLines = 4 * MaxSeries
	maxLine  = 64 << 10
	// scrapeTimeout bounds one scrape, from request to the text's end.
	scrapeTimeout = 5 * time.Second
)

// limitError is a scrape that went past a bound: a note, as well as a
// failed scrape.
type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

// fetch reads one endpoint's metrics: per wanted metric name, the sum,
// count and extremes of its samples over label sets.
func fetch(ctx context.Context, url string, want map[string]bool) (map[string]series, error) {
	ctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %d", url, resp.StatusCode)
	}
	if resp.ContentLength > MaxScrapeBytes {
		return nil, &limitError{fmt.Sprintf("%s: %d bytes, more than the %d MiB a scrape may be", url, resp.ContentLength, MaxScrapeBytes>>20)}
	}
	return parse(resp.Body, want)
}

// series is one metric in one scrape: its sum, count and extremes over
// label sets, the count of samples that were not numbers (NaN, ±Inf,
// left out of the rest), and, for the metrics read per GPU across
// scrapes (energy counters), each label set's value.
type series struct {
	sum, min, max float64
	n, bad        int
	byLabels      map[uint64]float64
}

// parse reads the Prometheus text format, keeping the names in want (the
// value: keep each label set's value too). Every sample counts against
// MaxSeries and every line against the line bounds, kept or not. A label
// set served twice for a name counts once, at its first value.
func parse(r io.Reader, want map[string]bool) (map[string]series, error) {
	br := bufio.NewReaderSize(inputfile.LimitReader(r, MaxScrapeBytes, &limitError{fmt.Sprintf("more than the %d MiB a scrape may be", MaxScrapeBytes>>20)}), maxLine)
	out := map[string]series{}
	seen := map[uint64]bool{}
	samples := 0
	var pairs [][2][]byte
	for lines := 1; ; lines++ {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, &limitError{fmt.Sprintf("line %d is longer than %d KiB", lines, maxLine>>10)}
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		if lines > maxLines && len(line) > 0 {
			return nil, &limitError{fmt.Sprintf("more than %d lines", maxLines)}
		}
		name, labels, v, ok, perr := parseLine(line, pairs[:0])
		if perr != nil {
			return nil, fmt.Errorf("line %d: %w", lines, perr)
		}
		if ok {
			if samples++; samples > MaxSeries {
				return nil, &limitError{fmt.Sprintf("more than %d series", MaxSeries)}
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

func (s *series) add(key uint64, v float64, perLabel bool) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		s.bad++
		return
	}
	if s.n == 0 {
		s.min, s.max = v, v
	}
	s.sum += v
	s.min, s.max = min(s.min, v), max(s.max, v)
	s.n++
	if perLabel {
		if s.byLabels == nil {
			s.byLabels = map[uint64]float64{}
		}
		s.byLabels[key] = v
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

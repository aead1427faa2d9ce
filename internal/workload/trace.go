package workload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/inputfile"
)

// Bounds on a trace. A trace is read whole before a run and kept through
// it; these keep what it holds under about 150 MB (peak under 512 MB while
// it is read) whatever the file, and its lines are refused, with their
// numbers, past them. A run and `benchci validate` apply the same.
const (
	// MaxTraceSpan bounds the time from a trace's first timestamp to its
	// last: a week of recorded traffic. Replayed at a point's rate, a
	// longer span (1e300 s) would put every request but the first beyond
	// any point.
	MaxTraceSpan = 7 * 24 * time.Hour
	// MaxTraceEntries bounds a trace's requests: 2,000,000, 20 bytes each
	// as held. A point replays the trace from its start, so requests
	// past what points plan are never sent.
	MaxTraceEntries = 2_000_000
	// MaxTraceHashIDs bounds the hash_ids of a whole trace (8 bytes each
	// as held), and MaxEntryHashIDs those of one request: 16384 blocks of
	// Mooncake's 512 tokens are more than suite.MaxTokens.
	MaxTraceHashIDs = 8_000_000
	MaxEntryHashIDs = 16384
	// maxTraceLine bounds a trace's line: a request of MaxEntryHashIDs
	// ids of up to 19 digits fits.
	maxTraceLine = 1 << 20
)

// Trace is a recorded sequence of requests: when each arrived and, where
// known, its lengths. It is held compactly (20 bytes a request and 8 a
// block id): a trace of MaxTraceEntries requests costs 40 MB.
type Trace struct {
	at      []float64 // seconds, in order
	in, out []uint32  // tokens; 0: not recorded
	idEnd   []uint32  // request i's block ids are ids[idEnd[i-1]:idEnd[i]]
	ids     []int
}

// TraceEntry is one request of a trace. Zero lengths mean "not recorded":
// the suite's distributions fill them in.
type TraceEntry struct {
	At           float64 // seconds
	InputTokens  int
	OutputTokens int
	// HashIDs name the prompt's leading blocks (Mooncake's hash_ids):
	// requests whose lists begin alike share those blocks' tokens, so a
	// server's prefix cache sees the trace's reuse. From Entry, it is the
	// trace's own storage: read it, do not change it.
	HashIDs []int
}

// NewTrace makes a trace of entries, checked as a trace file's lines are
// (see ParseTrace).
func NewTrace(entries []TraceEntry) (*Trace, error) {
	t, c := &Trace{}, traceChecker{}
	for i, e := range entries {
		if err := c.check(e); err != nil {
			return nil, fmt.Errorf("trace entry %d: %w", i+1, err)
		}
		t.add(e)
	}
	if t.Len() == 0 {
		return nil, fmt.Errorf("a trace needs at least one entry")
	}
	return t, nil
}

// Len is the trace's number of requests.
func (t *Trace) Len() int { return len(t.at) }

// Entry returns request i of the trace.
func (t *Trace) Entry(i int) TraceEntry {
	return TraceEntry{At: t.at[i], InputTokens: int(t.in[i]), OutputTokens: int(t.out[i]), HashIDs: t.hashIDs(i)}
}

func (t *Trace) hashIDs(i int) []int {
	lo := uint32(0)
	if i > 0 {
		lo = t.idEnd[i-1]
	}
	return t.ids[lo:t.idEnd[i]:t.idEnd[i]]
}

func (t *Trace) add(e TraceEntry) {
	t.at = append(t.at, e.At)
	t.in = append(t.in, uint32(e.InputTokens))
	t.out = append(t.out, uint32(e.OutputTokens))
	t.ids = append(t.ids, e.HashIDs...)
	t.idEnd = append(t.idEnd, uint32(len(t.ids)))
}

// Rate is the trace's mean arrival rate per second.
func (t *Trace) Rate() float64 {
	n := t.Len()
	if n < 2 {
		return 1
	}
	span := t.at[n-1] - t.at[0]
	if span <= 0 {
		return 1
	}
	return float64(n-1) / span
}

// LoadTrace reads a JSONL trace file (see ParseTrace), a regular file of
// at most suite.MaxDataFile bytes.
func LoadTrace(path string) (*Trace, error) {
	f, err := inputfile.Open(path, suite.MaxDataFile)
	if err != nil {
		return nil, fmt.Errorf("load trace: %w", err)
	}
	defer f.Close()
	t, err := ParseTrace(f)
	if err != nil {
		return nil, fmt.Errorf("load trace %w", atFile(path, err))
	}
	return t, nil
}

// CheckTrace reads a trace file as LoadTrace does, with the same bounds
// and errors, keeping none of it: its memory does not grow with the file
// (`benchci validate` of an 800 MB trace).
func CheckTrace(path string) error {
	f, err := inputfile.Open(path, suite.MaxDataFile)
	if err != nil {
		return fmt.Errorf("load trace: %w", err)
	}
	defer f.Close()
	if err := ScanTrace(f, func(TraceEntry) {}); err != nil {
		return fmt.Errorf("load trace %w", atFile(path, err))
	}
	return nil
}

// ParseTrace reads JSONL lines {"timestamp": seconds, "input_tokens": n,
// "output_tokens": m, "hash_ids": [...]}, where "timestamp_ms" may stand
// for "timestamp" and hash_ids is optional; or lines of the Mooncake trace
// format, {"timestamp": milliseconds, "input_length": n, "output_length":
// m, "hash_ids": [...]}, told apart by their length fields. Blank lines
// are skipped. Timestamps are finite, not negative, in order (equal ones
// arrive together; a line before the one above it is an error: sort the
// trace by time), and within MaxTraceSpan of the first; lengths are at
// most suite.MaxTokens; block ids are not negative, at most
// MaxEntryHashIDs a line. Every bad line is an error naming the line; past
// MaxTraceEntries requests or MaxTraceHashIDs block ids the file is
// refused at the line that passed the bound.
func ParseTrace(r io.Reader) (*Trace, error) {
	t := &Trace{}
	if err := ScanTrace(r, t.add); err != nil {
		return nil, err
	}
	return t, nil
}

// ScanTrace reads a trace as ParseTrace does, calling f with each good
// request in turn (its HashIDs are f's to keep) instead of keeping them.
func ScanTrace(r io.Reader, f func(TraceEntry)) error {
	c := traceChecker{}
	err := eachLine(r, maxTraceLine, func(b []byte) error {
		e, err := parseTraceLine(b)
		if err != nil {
			return err
		}
		if err := c.check(e); err != nil {
			return err
		}
		f(e)
		return nil
	})
	if err != nil {
		return err
	}
	if c.entries == 0 {
		return fmt.Errorf(" no entries")
	}
	return nil
}

func parseTraceLine(b []byte) (TraceEntry, error) {
	var e struct {
		Timestamp    *float64 `json:"timestamp"`
		TimestampMS  *float64 `json:"timestamp_ms"`
		InputTokens  int      `json:"input_tokens"`
		OutputTokens int      `json:"output_tokens"`
		InputLength  *int     `json:"input_length"`
		OutputLength *int     `json:"output_length"`
		HashIDs      []int    `json:"hash_ids"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return TraceEntry{}, err
	}
	if mooncake := e.InputLength != nil || e.OutputLength != nil; mooncake {
		if e.InputTokens != 0 || e.OutputTokens != 0 || e.TimestampMS != nil {
			return TraceEntry{}, fmt.Errorf("mixes the Mooncake fields (input_length, output_length, timestamp in ms) with input_tokens, output_tokens or timestamp_ms")
		}
		if e.InputLength != nil {
			e.InputTokens = *e.InputLength
		}
		if e.OutputLength != nil {
			e.OutputTokens = *e.OutputLength
		}
		if e.Timestamp != nil {
			e.TimestampMS, e.Timestamp = e.Timestamp, nil
		}
	}
	var at float64
	switch {
	case e.Timestamp != nil && e.TimestampMS == nil:
		at = *e.Timestamp
	case e.TimestampMS != nil && e.Timestamp == nil:
		at = *e.TimestampMS / 1000
	default:
		return TraceEntry{}, fmt.Errorf("want exactly one of timestamp (s) and timestamp_ms")
	}
	return TraceEntry{At: at, InputTokens: e.InputTokens, OutputTokens: e.OutputTokens, HashIDs: e.HashIDs}, nil
}

// traceChecker applies a trace's bounds to its requests in turn.
type traceChecker struct {
	entries, ids int
	first, last  float64
}

func (c *traceChecker) check(e TraceEntry) error {
	if math.IsNaN(e.At) || math.IsInf(e.At, 0) || e.At < 0 {
		return fmt.Errorf("timestamp %v is not a time", e.At)
	}
	if e.InputTokens < 0 || e.OutputTokens < 0 {
		return fmt.Errorf("negative token count")
	}
	if e.InputTokens > suite.MaxTokens || e.OutputTokens > suite.MaxTokens {
		return fmt.Errorf("%d tokens is beyond any model's context (at most %d)", max(e.InputTokens, e.OutputTokens), suite.MaxTokens)
	}
	if len(e.HashIDs) > MaxEntryHashIDs {
		return fmt.Errorf("hash_ids: %d block ids, more than the %d a request may have", len(e.HashIDs), MaxEntryHashIDs)
	}
	for _, id := range e.HashIDs {
		if id < 0 {
			return fmt.Errorf("hash_ids: negative block id %d", id)
		}
	}
	if c.entries > 0 {
		if e.At < c.last {
			return fmt.Errorf("timestamp %vs is before the %vs of the request above it: a trace's lines are in time order (sort it by timestamp)", e.At, c.last)
		}
		if span := e.At - c.first; span > MaxTraceSpan.Seconds() {
			return fmt.Errorf("timestamp %vs is %.4g s after the first request's, more than the %v a trace may span", e.At, span, MaxTraceSpan)
		}
	}
	if c.entries == MaxTraceEntries {
		return stop{fmt.Errorf("more than the %d requests a trace may have: cut it (head -n %d)", MaxTraceEntries, MaxTraceEntries)}
	}
	if c.ids+len(e.HashIDs) > MaxTraceHashIDs {
		return stop{fmt.Errorf("hash_ids: more than the %d block ids a trace may have in all", MaxTraceHashIDs)}
	}
	if c.entries == 0 {
		c.first = e.At
	}
	c.entries++
	c.ids += len(e.HashIDs)
	c.last = e.At
	return nil
}

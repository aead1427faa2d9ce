package workload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
)

// Trace is a recorded sequence of requests: when each arrived and, where
// known, its lengths.
type Trace struct {
	Entries []TraceEntry
}

// TraceEntry is one request of a trace. Zero lengths mean "not recorded":
// the suite's distributions fill them in.
type TraceEntry struct {
	At           float64 // seconds
	InputTokens  int
	OutputTokens int
	// HashIDs name the prompt's leading blocks (Mooncake's hash_ids):
	// requests whose lists begin alike share those blocks' tokens, so a
	// server's prefix cache sees the trace's reuse.
	HashIDs []int
}

// Rate is the trace's mean arrival rate per second.
func (t *Trace) Rate() float64 {
	n := len(t.Entries)
	if n < 2 {
		return 1
	}
	span := t.Entries[n-1].At - t.Entries[0].At
	if span <= 0 {
		return 1
	}
	return float64(n-1) / span
}

// LoadTrace reads a JSONL trace file.
func LoadTrace(path string) (*Trace, error) {
	f, err := os.Open(path)
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

// ParseTrace reads JSONL lines {"timestamp": seconds, "input_tokens": n,
// "output_tokens": m, "hash_ids": [...]}, where "timestamp_ms" may stand
// for "timestamp" and hash_ids is optional; or lines of the Mooncake trace
// format, {"timestamp": milliseconds, "input_length": n, "output_length":
// m, "hash_ids": [...]}, told apart by their length fields. Blank lines
// are skipped; unknown fields and negative block ids are errors naming the
// line. Entries are sorted by time.
func ParseTrace(r io.Reader) (*Trace, error) {
	t := &Trace{}
	err := eachLine(r, func(b []byte) error {
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
			return err
		}
		if mooncake := e.InputLength != nil || e.OutputLength != nil; mooncake {
			if e.InputTokens != 0 || e.OutputTokens != 0 || e.TimestampMS != nil {
				return fmt.Errorf("mixes the Mooncake fields (input_length, output_length, timestamp in ms) with input_tokens, output_tokens or timestamp_ms")
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
		for _, id := range e.HashIDs {
			if id < 0 {
				return fmt.Errorf("hash_ids: negative block id %d", id)
			}
		}
		var at float64
		switch {
		case e.Timestamp != nil && e.TimestampMS == nil:
			at = *e.Timestamp
		case e.TimestampMS != nil && e.Timestamp == nil:
			at = *e.TimestampMS / 1000
		default:
			return fmt.Errorf("want exactly one of timestamp (s) and timestamp_ms")
		}
		if math.IsNaN(at) || math.IsInf(at, 0) || at < 0 {
			return fmt.Errorf("timestamp %v is not a time", at)
		}
		if e.InputTokens < 0 || e.OutputTokens < 0 {
			return fmt.Errorf("negative token count")
		}
		t.Entries = append(t.Entries, TraceEntry{At: at, InputTokens: e.InputTokens, OutputTokens: e.OutputTokens, HashIDs: e.HashIDs})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(t.Entries) == 0 {
		return nil, fmt.Errorf(" no entries")
	}
	sort.SliceStable(t.Entries, func(i, j int) bool { return t.Entries[i].At < t.Entries[j].At })
	return t, nil
}

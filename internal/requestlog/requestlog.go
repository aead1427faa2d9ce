// Package requestlog writes one JSON line per request sent, for analysis
// outside benchci (pandas, DuckDB, jq). Lines are written as requests
// finish, so a run of any length costs a buffer, not a list.
//
// The schema is Record's; times are milliseconds from the request's send
// unless named otherwise, and the first line's "schema" field names the
// version. New fields may be added; none will change meaning.
package requestlog

import (
	"bufio"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/benchci/benchci/internal/client"
	"github.com/benchci/benchci/internal/recorder"
)

// Schema names the line format.
const Schema = "benchci.requests/v1"

// Record is one request.
type Record struct {
	Schema string `json:"schema,omitempty"` // on the first line only
	// Point and Trial say which load point sent it.
	Point string `json:"point"`
	Trial int    `json:"trial"`
	// Rerun numbers the attempt of the trial that sent it: 0 (omitted) for
	// the first; a trial that did not measure the server is measured
	// again, and its point's results keep only the last attempt (the
	// point's validity.reruns lists the discarded ones), so a line whose
	// rerun is below that count was not in the figures. It is the trial's
	// attempt, not the request's: see Attempts.
	Rerun int `json:"rerun,omitempty"`
	// Attempts is how many times this one request was sent under the
	// suite's retry policy (omitted when once); the line describes the
	// last attempt, and FirstSent is the first attempt's wall-clock send
	// (omitted when it is Sent), so Sent minus FirstSent is the time lost
	// to failed attempts and backoffs.
	Attempts  int       `json:"attempts,omitempty"`
	FirstSent time.Time `json:"first_sent,omitzero"`
	// ID is the X-Request-Id sent with it.
	ID string `json:"id"`
	// Warmup marks requests sent before the measured window.
	Warmup bool `json:"warmup,omitempty"`
	// Sent is the wall-clock send time (a retried request's last
	// attempt); LagMs how long after its intended time its first attempt
	// went: the client's lateness, as the lag figure counts it, without a
	// retry's backoff or a wait for a place under the suite's
	// max_concurrency, which are the server's doing; CapWaitMs is that
	// wait.
	Sent      time.Time `json:"sent"`
	LagMs     float64   `json:"lag_ms"`
	CapWaitMs float64   `json:"cap_wait_ms,omitempty"`
	// TTFTMs is to the first output chunk, TTFTAnswerMs to the first
	// answer chunk (later on reasoning models), E2EMs to the stream's end;
	// an answer of no content has no TTFT.
	TTFTMs       float64 `json:"ttft_ms,omitempty"`
	TTFTAnswerMs float64 `json:"ttft_answer_ms,omitempty"`
	E2EMs        float64 `json:"e2e_ms"`
	// Lengths asked for, and as counted (TokenSource says by whom).
	WantInput    int    `json:"want_input_tokens,omitempty"`
	WantOutput   int    `json:"want_output_tokens,omitempty"`
	PromptTokens int    `json:"prompt_tokens,omitempty"`
	OutputTokens int    `json:"output_tokens,omitempty"`
	TokenSource  string `json:"token_source,omitempty"`
	// Finish is why an answer ended (result.FinishKinds).
	Finish string `json:"finish,omitempty"`
	// Chunks is the content chunks received; CoalescedGaps the gaps
	// between them that came in one read and were not measured.
	Chunks        int `json:"chunks"`
	CoalescedGaps int `json:"coalesced_gaps,omitempty"`
	// GapsMs are the gaps between content chunks, when asked for.
	GapsMs []float64 `json:"gaps_ms,omitempty"`
	// Error is the error kind ("" for an answer), Status the HTTP status,
	// Detail the error's text.
	Error  string `json:"error,omitempty"`
	Status int    `json:"status,omitempty"`
	Detail string `json:"detail,omitempty"`
}

// Writer writes records to an underlying writer. It is safe for the
// concurrent use of several points, though points run one at a time.
type Writer struct {
	mu    sync.Mutex
	bw    *bufio.Writer
	enc   *json.Encoder
	gaps  bool
	first bool
	n     int
	err   error
}

// New returns a Writer on w; gaps adds every chunk gap to each record.
func New(w io.Writer, gaps bool) *Writer {
	bw := bufio.NewWriterSize(w, 64<<10)
	return &Writer{bw: bw, enc: json.NewEncoder(bw), gaps: gaps, first: true}
}

// Add writes the record of one finished request. The first error stops
// writing and is returned by Close.
func (w *Writer) Add(point string, trial, rerun int, s recorder.Sample) {
	r := s.Result
	rec := Record{
		Point: point, Trial: trial, Rerun: rerun, ID: r.ID, Warmup: s.Warmup,
		Sent: r.Sent.UTC(), LagMs: millis(s.SendLag()),
		TTFTMs: millis(r.FirstToken), TTFTAnswerMs: millis(r.FirstAnswer), E2EMs: millis(r.End),
		WantInput: s.WantInput, WantOutput: s.WantOutput,
		PromptTokens: r.PromptTokens, OutputTokens: r.OutputTokens, TokenSource: string(r.TokenSource), Finish: string(r.Finish),
		Chunks: len(r.ChunkAt), Error: string(r.Err), Status: r.Status, Detail: r.Detail,
	}
	for i := 1; i < len(r.ChunkAt); i++ {
		if !r.MeasuredGap(i) {
			rec.CoalescedGaps++
		}
		if w.gaps {
			rec.GapsMs = append(rec.GapsMs, millis(r.ChunkAt[i]-r.ChunkAt[i-1]))
		}
	}
	if s.Ready.After(s.Scheduled) {
		rec.CapWaitMs = millis(s.Ready.Sub(s.Scheduled))
	}
	if s.Attempts > 1 {
		rec.Attempts = s.Attempts
		if !s.UserStart.IsZero() {
			if !s.UserStart.Equal(r.Sent) {
				rec.FirstSent = s.UserStart.UTC()
			}
		}
	}
	if r.Err == client.ErrNone {
		rec.Status = 0 // 200 says nothing an answer does not
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return
	}
	if w.first {
		rec.Schema, w.first = Schema, false
	}
	w.err = w.enc.Encode(&rec)
	w.n++
}

// Count is how many records were written.
func (w *Writer) Count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n
}

// Close flushes what is buffered and returns the first error.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = w.bw.Flush()
	}
	return w.err
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

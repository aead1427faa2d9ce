package requestlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/benchci/benchci/internal/client"
	"github.com/benchci/benchci/internal/recorder"
)

const ms = time.Millisecond

func answer(sent time.Time) *client.Result {
	return &client.Result{
		ID: "benchci-1", Sent: sent, FirstToken: 20 * ms, FirstAnswer: 20 * ms, End: 61 * ms,
		ChunkAt: []time.Duration{20 * ms, 40 * ms, 40 * ms, 60 * ms}, ChunkTokens: []int32{1, 1, 1, 1},
		ChunkRead:    []uint32{1, 2, 2, 3},
		PromptTokens: 12, OutputTokens: 4, TokenSource: client.TokensFromUsage, Status: 200, Finish: client.FinishLength,
	}
}

func TestRecords(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	for _, gaps := range []bool{false, true} {
		var buf bytes.Buffer
		w := New(&buf, gaps)
		w.Add("rate=4", 2, 0, recorder.Sample{Result: answer(t0.Add(ms)), Scheduled: t0, WantInput: 10, WantOutput: 4})
		w.Add("rate=4", 2, 1, recorder.Sample{Result: &client.Result{ID: "benchci-2", Sent: t0, End: 5 * ms, Err: client.ErrHTTP, Status: 503, Detail: "HTTP 503: busy"}, Scheduled: t0, Warmup: true})
		// Sent a third time 1.5 s after its first attempt, which went 2 ms
		// late: a Retry-After obeyed is not the client's lag.
		w.Add("rate=4", 2, 0, recorder.Sample{Result: answer(t0.Add(1500 * ms)), Scheduled: t0, Attempts: 3, UserStart: t0.Add(2 * ms)})
		// Sent once under a retry policy: nothing to add.
		w.Add("rate=4", 2, 0, recorder.Sample{Result: answer(t0.Add(ms)), Scheduled: t0, Attempts: 1, UserStart: t0.Add(ms)})
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		var recs []Record
		var lines []string
		sc := bufio.NewScanner(&buf)
		for sc.Scan() {
			lines = append(lines, sc.Text())
			var r Record
			dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
			dec.DisallowUnknownFields() // every field written is documented in Record
			if err := dec.Decode(&r); err != nil {
				t.Fatalf("line %q: %v", sc.Text(), err)
			}
			recs = append(recs, r)
		}
		if len(recs) != 4 || w.Count() != 4 {
			t.Fatalf("%d lines, count %d; want 4", len(recs), w.Count())
		}
		a, e := recs[0], recs[1]
		if r := recs[2]; r.Attempts != 3 || !r.FirstSent.Equal(t0.Add(2*ms)) || !r.Sent.Equal(t0.Add(1500*ms)) || r.LagMs != 2 || r.Rerun != 0 {
			t.Errorf("retried record: attempts %d, first_sent %v, sent %v, lag %v ms, rerun %d; want 3, +2ms, +1.5s, 2 ms, 0",
				r.Attempts, r.FirstSent, r.Sent, r.LagMs, r.Rerun)
		}
		if strings.Contains(lines[3], "attempts") || strings.Contains(lines[3], "first_sent") {
			t.Errorf("a request sent once writes its retry fields: %s", lines[3])
		}
		if r := recs[3]; r.Attempts != 0 || !r.FirstSent.IsZero() || r.LagMs != 1 {
			t.Errorf("request sent once: attempts %d, first_sent %v, lag %v ms; want both omitted, 1 ms", r.Attempts, r.FirstSent, r.LagMs)
		}
		if a.Attempts != 0 || !a.FirstSent.IsZero() || e.Attempts != 0 {
			t.Errorf("lines without a retry policy carry attempts %d, %d, first_sent %v", a.Attempts, e.Attempts, a.FirstSent)
		}
		if a.Schema != Schema || e.Schema != "" {
			t.Errorf("schema %q then %q; want it on the first line only", a.Schema, e.Schema)
		}
		if a.Point != "rate=4" || a.Trial != 2 || a.ID != "benchci-1" || a.LagMs != 1 || a.TTFTMs != 20 || a.E2EMs != 61 ||
			a.OutputTokens != 4 || a.TokenSource != "usage" || a.Finish != "length" || a.Chunks != 4 || a.CoalescedGaps != 2 || a.Status != 0 || a.Error != "" || !a.Sent.Equal(t0.Add(ms)) {
			t.Errorf("answer record %+v", a)
		}
		if gaps != (len(a.GapsMs) == 3) || (gaps && (a.GapsMs[0] != 20 || a.GapsMs[1] != 0 || a.GapsMs[2] != 20)) {
			t.Errorf("gaps %v with gaps=%v", a.GapsMs, gaps)
		}
		if a.Rerun != 0 || e.Rerun != 1 {
			t.Errorf("reruns %d then %d; want 0 then 1", a.Rerun, e.Rerun)
		}
		if e.Error != "http" || e.Status != 503 || e.Detail != "HTTP 503: busy" || !e.Warmup || e.Chunks != 0 || e.Finish != "" {
			t.Errorf("error record %+v", e)
		}
	}
}

// The writer keeps nothing per request: 100,000 records leave the heap
// where it was. Not parallel, so the heap is this test's.
func TestConstantMemory(t *testing.T) {
	w := New(io.Discard, true)
	res := answer(time.Now())
	add := func(n int) {
		for range n {
			w.Add("rate=100", 1, 0, recorder.Sample{Result: res, Scheduled: res.Sent})
		}
	}
	add(1000) // buffers and encoder at their working size
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	add(100_000)
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 1<<20 {
		t.Errorf("the heap grew %d KB over 100,000 records", grew>>10)
	}
	if w.Count() != 101_000 {
		t.Errorf("count %d", w.Count())
	}
}

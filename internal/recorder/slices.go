package recorder

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/client"
)

// Slice bounds. A point is cut into slices of DefaultSliceWidth, widened
// so that its planned length makes at most MaxSlices; slices past twice
// that (a long drain) fold into the last one. Each slice keeps a TTFT
// histogram of 2 significant digits over 1 ms to 1 h (15 KB), so a point
// holds at most 2 x 120 x 15 KB, however long it runs.
const (
	DefaultSliceWidth = time.Second
	MaxSlices         = 120
)

// Slicer records a point's figures over time, warm-up included, so that
// warm-up, drift and saturation can be seen: per slice, the requests sent
// (by send time), those that finished, completed and failed (by end time),
// the output tokens streamed in it (by chunk time), the requests in
// flight at its end, and the TTFT of the requests sent in it.
type Slicer struct {
	t0    time.Time
	width time.Duration
	// window is the measured window's start, from t0.
	window time.Duration
	rows   []sliceRow
}

type sliceRow struct {
	sent, finished, completed, failed int
	tokens                            float64
	ttft                              *hdrhistogram.Histogram
}

// NewSlicer slices a point that starts at t0, is planned to last span (0:
// unknown) and whose measured window starts window after t0.
func NewSlicer(t0 time.Time, span, window time.Duration) *Slicer {
	width := DefaultSliceWidth
	if span > 0 {
		width = max(width, (span+MaxSlices-1)/MaxSlices)
	}
	return &Slicer{t0: t0, width: width, window: window}
}

// row returns the slice holding t, growing the list up to its bound.
func (s *Slicer) row(t time.Time) *sliceRow {
	k := max(0, int(t.Sub(s.t0)/s.width))
	k = min(k, 2*MaxSlices-1)
	for len(s.rows) <= k {
		s.rows = append(s.rows, sliceRow{})
	}
	return &s.rows[k]
}

// Add records one finished request.
func (s *Slicer) Add(smp Sample) {
	res := smp.Result
	s.row(res.Sent).sent++
	end := s.row(res.Sent.Add(res.End))
	end.finished++
	if !res.OK() {
		switch res.Err {
		case client.ErrCanceled, client.ErrAbandoned, client.ErrClientLimit:
			// Stopped by the run, a user or this machine: not the server's.
		default:
			end.failed++
		}
		return
	}
	end.completed++
	total := 0
	for _, n := range res.ChunkTokens {
		total += int(n)
	}
	scale := 1.0
	if res.OutputTokens > 0 && total > 0 {
		scale = float64(res.OutputTokens) / float64(total)
	}
	for i, at := range res.ChunkAt {
		s.row(res.Sent.Add(at)).tokens += float64(res.ChunkTokens[i]) * scale
	}
	if res.FirstToken > 0 {
		r := s.row(res.Sent)
		if r.ttft == nil {
			r.ttft = hdrhistogram.New(1, int64(time.Hour/time.Millisecond), 2)
		}
		r.ttft.RecordValue(max(int64(res.FirstToken/time.Millisecond), 1))
	}
}

// Slices summarizes the slices recorded.
func (s *Slicer) Slices() *result.Slices {
	out := &result.Slices{WidthS: s.width.Seconds(), WindowStartS: s.window.Seconds(), Slices: make([]result.Slice, len(s.rows))}
	inFlight := 0
	for i, r := range s.rows {
		inFlight += r.sent - r.finished
		sl := result.Slice{Sent: r.sent, Finished: r.finished, Completed: r.completed, Failed: r.failed,
			InFlight: inFlight, OutputTokPS: r.tokens / s.width.Seconds()}
		if r.ttft != nil {
			sl.TTFTP50Ms = float64(r.ttft.ValueAtQuantile(50))
			sl.TTFTP99Ms = float64(r.ttft.ValueAtQuantile(99))
		}
		out.Slices[i] = sl
	}
	return out
}

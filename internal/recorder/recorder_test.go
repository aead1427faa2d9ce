package recorder

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/client"
)

const ms = time.Millisecond

// stream builds a successful result: first chunk at ttft, then one chunk
// every itl, each carrying perChunk tokens; the stream ends 1 ms after the
// last chunk.
func stream(sent time.Time, ttft, itl time.Duration, chunks, perChunk int) *client.Result {
	r := &client.Result{Sent: sent, FirstToken: ttft, FirstAnswer: ttft, PromptTokens: 100, TokenSource: client.TokensFromUsage}
	for i := range chunks {
		r.ChunkAt = append(r.ChunkAt, ttft+time.Duration(i)*itl)
		r.ChunkTokens = append(r.ChunkTokens, int32(perChunk))
	}
	r.OutputTokens = chunks * perChunk
	r.End = r.ChunkAt[chunks-1] + ms
	return r
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %v, want %v ±%v", what, got, want, tol)
	}
}

func TestRecorderLatencies(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	rec := NewRecorder(t0, t0.Add(10*time.Second))
	// Ten requests: TTFT 100 ms, 11 chunks of 3 tokens 20 ms apart, sent 2 ms
	// after their scheduled time.
	for i := range 10 {
		sent := t0.Add(time.Duration(i) * 500 * ms)
		rec.Add(Sample{Result: stream(sent, 100*ms, 20*ms, 11, 3), Scheduled: sent.Add(-2 * ms), WantInput: 100, WantOutput: 33})
	}
	p, err := rec.Point()
	if err != nil {
		t.Fatal(err)
	}
	l := p.Latency
	near(t, "ttft p50", l[metric.TTFT].P50, 100, 0.1)
	near(t, "ttft_sched p50", l[metric.TTFTSched].P50, 102, 0.1)
	near(t, "itl p99", l[metric.ITL].P99, 20, 0.02)
	if l[metric.ITL].Count != 100 {
		t.Errorf("itl count %d, want one per chunk gap (10 x 10)", l[metric.ITL].Count)
	}
	// TPOT per token: (e2e - ttft) / (33 - 1) = (200 + 1) ms / 32.
	near(t, "tpot p50", l[metric.TPOT].P50, 201.0/32, 0.01)
	near(t, "e2e p50", l[metric.E2E].P50, 301, 0.3)
	near(t, "lag max", l[metric.Lag].Max, 2, 0.01)
	if p.Tokens.PerChunk != 3 || p.Tokens.OutputMismatch != 0 || p.Tokens.PromptMismatch != 0 {
		t.Errorf("tokens %+v", p.Tokens)
	}
	if p.Requests.Sent != 10 || p.Requests.Completed != 10 || p.Requests.ErrorRate != 0 {
		t.Errorf("requests %+v", p.Requests)
	}
	// Every request ends inside the 10 s window: 10 requests, 330 tokens.
	near(t, "request throughput", p.Throughput.Requests, 1, 1e-9)
	near(t, "output throughput", p.Throughput.OutputTokens, 33, 1e-9)
	near(t, "total throughput", p.Throughput.TotalTokens, 133, 1e-9)
}

func TestRecorderWindowWarmupAndErrors(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	winStart := t0.Add(time.Second)
	rec := NewRecorder(winStart, winStart.Add(time.Second))
	// A warm-up request streaming across the window start: its chunks inside
	// the window count for throughput, its latency does not.
	warm := stream(t0.Add(500*ms), 100*ms, 100*ms, 10, 1) // chunks at 0.6..1.5 s
	rec.Add(Sample{Result: warm, Scheduled: warm.Sent, Warmup: true})
	// A measured request running past the window end (cool-down).
	late := stream(winStart.Add(800*ms), 50*ms, 100*ms, 5, 1) // chunks at 1.85..2.25 s
	rec.Add(Sample{Result: late, Scheduled: late.Sent, WantOutput: 7})
	rec.Add(Sample{Result: &client.Result{Sent: winStart, Err: client.ErrHTTP, Status: 503, Detail: "busy"}, Scheduled: winStart})
	rec.Add(Sample{Result: &client.Result{Sent: winStart, Err: client.ErrTimeout}, Scheduled: winStart})
	rec.Add(Sample{Result: &client.Result{Sent: winStart, Err: client.ErrCanceled}, Scheduled: winStart})
	p, err := rec.Point()
	if err != nil {
		t.Fatal(err)
	}
	if p.Requests.Sent != 3 || p.Requests.Completed != 1 || p.Requests.Warmup != 1 || p.Requests.Canceled != 1 {
		t.Errorf("requests %+v", p.Requests)
	}
	if p.Requests.Errors["http_503"] != 1 || p.Requests.Errors["timeout"] != 1 || p.Requests.LastError["http_503"] != "busy" {
		t.Errorf("errors %v %v", p.Requests.Errors, p.Requests.LastError)
	}
	near(t, "error rate", p.Requests.ErrorRate, 2.0/3, 1e-9)
	if p.Latency[metric.TTFT].Count != 1 {
		t.Errorf("ttft count %d: warm-up or failures were recorded", p.Latency[metric.TTFT].Count)
	}
	// In [1 s, 2 s): warm-up chunks at 1.0..1.5 s (6), late chunks at 1.85, 1.95 (2).
	near(t, "output throughput", p.Throughput.OutputTokens, 8, 1e-9)
	// Nothing completed inside the window (warm-up ends at 1.501 s but its
	// completion counts; the late one ends after).
	near(t, "request throughput", p.Throughput.Requests, 1, 1e-9)
	if p.Tokens.OutputMismatch != 1 {
		t.Errorf("output mismatch %d, want 1 (asked 7, got 5)", p.Tokens.OutputMismatch)
	}
}

func TestRecorderOpenWindow(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	rec := NewRecorder(t0, time.Time{})
	r := stream(t0, 100*ms, 100*ms, 10, 1) // ends at 1.001 s
	rec.Add(Sample{Result: r, Scheduled: t0})
	p, _ := rec.Point()
	near(t, "window", p.Window.Seconds, 1.001, 1e-6)
	near(t, "output throughput", p.Throughput.OutputTokens, 10/1.001, 1e-6)
}

func TestHistogramRoundTrip(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	rec := NewRecorder(t0, time.Time{})
	for i := range 50 {
		rec.Add(Sample{Result: stream(t0, time.Duration(i+1)*ms, ms, 3, 1), Scheduled: t0})
	}
	p, _ := rec.Point()
	h, err := result.DecodeHistogram(p.Histograms[metric.TTFT])
	if err != nil {
		t.Fatal(err)
	}
	if got := result.Summarize(h, 1000); got != p.Latency[metric.TTFT] {
		t.Errorf("decoded summary %+v, want %+v", got, p.Latency[metric.TTFT])
	}
	if _, err := result.DecodeHistogram("not base64!"); err == nil {
		t.Error("garbage decoded")
	}
}

func TestSummaryStat(t *testing.T) {
	t.Parallel()
	s := result.Summary{Min: 1, Mean: 2, P50: 3, P90: 4, P95: 5, P99: 6, P999: 7, Max: 8}
	for name, want := range map[string]float64{"min": 1, "mean": 2, "p50": 3, "p90": 4, "p95": 5, "p99": 6, "p99.9": 7, "max": 8} {
		if got, ok := s.Stat(name); !ok || got != want {
			t.Errorf("Stat(%q) = %v, %v", name, got, ok)
		}
	}
	if _, ok := s.Stat("p42"); ok {
		t.Error("unknown stat accepted")
	}
}

func TestRecorderGoodput(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	rec := NewRecorder(t0, t0.Add(10*time.Second))
	rec.Goodput = Criteria{TTFT: 150 * ms, TPOT: 30 * ms}
	// TTFT 100 ms, TPOT 20 ms: good. TTFT 200 ms: bad. TPOT 40 ms: bad.
	rec.Add(Sample{Result: stream(t0, 100*ms, 20*ms, 5, 1), Scheduled: t0})
	rec.Add(Sample{Result: stream(t0, 200*ms, 20*ms, 5, 1), Scheduled: t0})
	rec.Add(Sample{Result: stream(t0, 100*ms, 40*ms, 5, 1), Scheduled: t0})
	rec.Add(Sample{Result: &client.Result{Sent: t0, Err: client.ErrTimeout}, Scheduled: t0})
	p, _ := rec.Point()
	if p.Requests.Good != 1 || p.Throughput.Goodput == nil {
		t.Fatalf("good %d goodput %v", p.Requests.Good, p.Throughput.Goodput)
	}
	near(t, "goodput", *p.Throughput.Goodput, 0.1, 1e-9)
	// Without criteria there is no goodput figure at all.
	plain := NewRecorder(t0, t0.Add(time.Second))
	plain.Add(Sample{Result: stream(t0, 100*ms, 20*ms, 5, 1), Scheduled: t0})
	if q, _ := plain.Point(); q.Throughput.Goodput != nil {
		t.Error("goodput reported without criteria")
	}
}

// Chunks that came several to a read share its stamp: the read's span
// since the previous read is spread evenly over its gaps (one ITL sample
// each), so ITL keeps every gap and the stream's total time; only the
// gaps inside an answer's first read, which nothing before times, are
// kept out and counted.
func TestRecorderCoalescedGaps(t *testing.T) {
	t.Parallel()
	us := time.Microsecond
	for _, tc := range []struct {
		name  string
		at    []time.Duration // each chunk's stamp: its read's
		reads []uint32
		// want: ITL samples (count, min, max, mean in ms), gaps kept out,
		// and gaps spread.
		count             int64
		min, max, mean    float64
		coalesced, spread int
	}{
		{
			// Chunks every 10 ms; the client fell behind after the first,
			// so chunks 1-3 came in one read stamped 40 ms, then chunk 4
			// alone. Spread: 30 ms over 3 gaps, 10 ms each, as sent.
			// Kept out (the old reading), ITL held one sample of 4.
			name: "late read", at: []time.Duration{10 * ms, 40 * ms, 40 * ms, 40 * ms, 50 * ms}, reads: []uint32{7, 8, 8, 8, 9},
			count: 4, min: 10, max: 10, mean: 10, spread: 3,
		},
		{
			// A bursty server (gaps of 0.2 and 3.8 ms, 2 ms a token) whose
			// 0.2 ms pairs come in one read: keeping only the gaps into a
			// chunk alone measured 3.8 ms, nearly twice the stream's pace;
			// a read's gap and a zero would put half the samples at 0.
			name:  "bursts read as pairs",
			at:    []time.Duration{0, 4 * ms, 4 * ms, 8 * ms, 8 * ms, 12 * ms, 12 * ms},
			reads: []uint32{1, 2, 2, 3, 3, 4, 4},
			count: 6, min: 2, max: 2, mean: 2, spread: 6,
		},
		{
			// The first read held two chunks: the gap between them has no
			// earlier arrival to measure from. The next read's span is
			// from the first read's last chunk.
			name: "first read of two", at: []time.Duration{40 * ms, 40 * ms, 50 * ms, 56 * ms, 56 * ms}, reads: []uint32{1, 1, 2, 3, 3},
			count: 3, min: 3, max: 10, mean: 16.0 / 3, coalesced: 1, spread: 2,
		},
		{
			name: "every chunk alone", at: []time.Duration{10 * ms, 20 * ms, 35 * ms}, reads: []uint32{1, 2, 3},
			count: 2, min: 10, max: 15, mean: 12.5,
		},
		{
			name: "no read numbers", at: []time.Duration{10 * ms, 20 * ms, 20 * ms},
			count: 2, min: 0.001, max: 10, mean: 5,
		},
		{
			name: "one read holds the answer", at: []time.Duration{10 * ms, 10 * ms, 10 * ms}, reads: []uint32{4, 4, 4},
			coalesced: 2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Now()
			rec := NewRecorder(t0, t0.Add(10*time.Second))
			res := stream(t0, tc.at[0], 10*ms, len(tc.at), 1)
			res.ChunkAt, res.ChunkRead = tc.at, tc.reads
			rec.Add(Sample{Result: res, Scheduled: t0})
			p, err := rec.Point()
			if err != nil {
				t.Fatal(err)
			}
			tk := p.Tokens
			if tk.ChunkGaps != len(tc.at)-1 || tk.CoalescedGaps != tc.coalesced || tk.SpreadGaps != tc.spread {
				t.Errorf("gaps %d, kept out %d, spread %d; want %d, %d and %d", tk.ChunkGaps, tk.CoalescedGaps, tk.SpreadGaps, len(tc.at)-1, tc.coalesced, tc.spread)
			}
			itl := p.Latency[metric.ITL]
			if itl.Count != tc.count {
				t.Fatalf("ITL %+v: %d samples, want %d", itl, itl.Count, tc.count)
			}
			if tc.count == 0 {
				return
			}
			// The histogram holds 3 significant digits of microseconds.
			tol := func(v float64) float64 { return v/500 + float64(us)/float64(ms) }
			near(t, "ITL min", itl.Min, tc.min, tol(tc.min))
			near(t, "ITL max", itl.Max, tc.max, tol(tc.max))
			near(t, "ITL mean", itl.Mean, tc.mean, tol(tc.mean))
			near(t, "kept-out share", tk.CoalescedShare(), float64(tc.coalesced)/float64(len(tc.at)-1), 1e-12)
		})
	}
}

// A first chunk read together with the next has the read's stamp, not its
// own: its TTFT is kept out, and counted. When most first chunks come so,
// the server sends them together and no read can part them: they are kept.
func TestRecorderCoalescedFirst(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		late, alone      int
		ttfts, coalesced int64
	}{
		{late: 1, alone: 9, ttfts: 9, coalesced: 1},
		{late: 0, alone: 5, ttfts: 5, coalesced: 0},
		{late: 6, alone: 4, ttfts: 10, coalesced: 0}, // the server's framing
	} {
		t0 := time.Now()
		rec := NewRecorder(t0, t0.Add(10*time.Second))
		for i := range tc.late + tc.alone {
			res := stream(t0, 10*ms, 10*ms, 3, 1)
			res.ChunkRead = []uint32{1, 2, 3}
			if i < tc.late {
				// Read 30 ms late, with the second chunk.
				res.FirstToken, res.ChunkAt, res.ChunkRead = 40*ms, []time.Duration{40 * ms, 40 * ms, 50 * ms}, []uint32{1, 1, 2}
			}
			rec.Add(Sample{Result: res, Scheduled: t0})
		}
		p, err := rec.Point()
		if err != nil {
			t.Fatal(err)
		}
		ttft := p.Latency[metric.TTFT]
		if ttft.Count != tc.ttfts || int64(p.Tokens.CoalescedFirst) != tc.coalesced {
			t.Errorf("%d late of %d: TTFTs %d, coalesced %d; want %d and %d", tc.late, tc.late+tc.alone, ttft.Count, p.Tokens.CoalescedFirst, tc.ttfts, tc.coalesced)
		}
		if tc.coalesced > 0 && ttft.Max > 10.1 {
			t.Errorf("TTFT %+v: a late read's 40 ms was kept", ttft)
		}
	}
}

// A request this machine could not send is the client's failure: it is
// counted apart, never in the server's error rate.
func TestRecorderClientLimitIsNotAServerError(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	rec := NewRecorder(t0, t0.Add(10*time.Second))
	rec.Add(Sample{Result: stream(t0, 10*ms, 10*ms, 3, 1), Scheduled: t0})
	rec.Add(Sample{Result: &client.Result{Sent: t0, Err: client.ErrClientLimit, Detail: "dial tcp: socket: too many open files"}, Scheduled: t0})
	rec.Add(Sample{Result: &client.Result{Sent: t0, Err: client.ErrConnect, Detail: "connection refused"}, Scheduled: t0})
	p, err := rec.Point()
	if err != nil {
		t.Fatal(err)
	}
	r := p.Requests
	if r.Sent != 2 || r.Failed != 1 || r.ErrorRate != 0.5 || r.ClientLimited != 1 || r.Errors["client_limit"] != 0 {
		t.Errorf("requests %+v; want 2 sent, 1 connect error, 1 client-limited apart", r)
	}
	if r.ClientLimitError != "dial tcp: socket: too many open files" {
		t.Errorf("client limit error %q", r.ClientLimitError)
	}
}

// A stream the workload's user closed on purpose is neither an answer
// nor an error.
func TestRecorderAbandonedIsItsOwnKind(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	rec := NewRecorder(t0, t0.Add(10*time.Second))
	rec.Add(Sample{Result: stream(t0, 10*ms, 10*ms, 3, 1), Scheduled: t0})
	ab := stream(t0, 10*ms, 10*ms, 2, 1)
	ab.Err = client.ErrAbandoned
	rec.Add(Sample{Result: ab, Scheduled: t0})
	p, _ := rec.Point()
	if r := p.Requests; r.Sent != 1 || r.Abandoned != 1 || r.ErrorRate != 0 || p.Latency[metric.TTFT].Count != 1 {
		t.Errorf("requests %+v, ttft count %d; want 1 answer, 1 abandoned apart", r, p.Latency[metric.TTFT].Count)
	}
}

// TestGoodputEqualsThroughputWhenAllGood is a property: whatever the mix
// of warm-up, measured and late requests, failures included, when every
// answer meets the per-request criteria goodput equals request throughput,
// because both count the answers that ended inside the window.
func TestGoodputEqualsThroughputWhenAllGood(t *testing.T) {
	t.Parallel()
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 11))
		t0 := time.Unix(1000, 0)
		warm := time.Duration(r.IntN(3)) * time.Second
		var end time.Time
		if r.IntN(4) > 0 { // a fixed window; otherwise open to the last completion
			end = t0.Add(warm + time.Duration(1+r.IntN(10))*time.Second)
		}
		rec := NewRecorder(t0.Add(warm), end)
		rec.Goodput = Criteria{TTFT: time.Hour, TPOT: time.Hour, E2E: time.Hour}
		n := 1 + r.IntN(300)
		for range n {
			sent := t0.Add(time.Duration(r.Int64N(int64(15 * time.Second))))
			res := stream(sent, time.Duration(1+r.IntN(2000))*ms, time.Duration(1+r.IntN(80))*ms, 1+r.IntN(50), 1+r.IntN(3))
			if r.IntN(10) == 0 {
				res = &client.Result{Sent: sent, End: time.Second, Err: client.ErrTimeout}
			}
			rec.Add(Sample{Result: res, Scheduled: sent, Warmup: sent.Before(t0.Add(warm))})
		}
		p, err := rec.Point()
		if err != nil {
			t.Fatal(err)
		}
		if p.Throughput.Goodput == nil || *p.Throughput.Goodput != p.Throughput.Requests {
			t.Fatalf("seed %d: goodput %v, request throughput %v; every answer was good", seed, p.Throughput.Goodput, p.Throughput.Requests)
		}
	}
}

// An answer of no content is a success: it counts, by why it ended, and
// its end is its E2E; it has no first token, so it adds no TTFT and no
// TPOT (once, its finish stood in for its TTFT, which put E2E among the
// TTFTs, and a usage of 5 tokens made a TPOT of 0), and no chunk gap.
func TestRecorderEmptyAnswers(t *testing.T) {
	var kinds []string
	for _, k := range client.FinishKinds {
		kinds = append(kinds, string(k))
	}
	if !slices.Equal(result.FinishKinds, kinds) { // the file's kinds are the client's
		t.Fatalf("result.FinishKinds %v and client.FinishKinds %v differ", result.FinishKinds, client.FinishKinds)
	}
	t.Parallel()
	t0 := time.Now()
	rec := NewRecorder(t0, t0.Add(10*time.Second))
	for range 3 { // answers with text: TTFT 100 ms, TPOT 20 ms
		r := stream(t0, 100*ms, 20*ms, 5, 1)
		r.Finish = client.FinishLength
		rec.Add(Sample{Result: r, Scheduled: t0, WantOutput: 5})
	}
	empty := func(finish client.FinishKind, tokens int) *client.Result {
		return &client.Result{Sent: t0, End: 41 * ms, OutputTokens: tokens, PromptTokens: 7, TokenSource: client.TokensFromUsage, Finish: finish}
	}
	for _, r := range []*client.Result{
		empty(client.FinishStopSequence, 1), // a stop sequence at once
		empty(client.FinishLength, 4),       // 4 byte tokens of no valid text, under ignore_eos
		empty(client.FinishEndToken, 5),     // Ollama: usage 5, nothing streamed
		empty(client.FinishEndToken, 1),
	} {
		rec.Add(Sample{Result: r, Scheduled: t0, WantOutput: 5, Attempts: 1, UserStart: t0})
	}
	p, err := rec.Point()
	if err != nil {
		t.Fatal(err)
	}
	tk := p.Tokens
	if p.Requests.Completed != 7 || p.Requests.Failed != 0 || tk.EmptyAnswers != 4 {
		t.Errorf("requests %+v, %d empty answers; want 7 answers, 4 empty", p.Requests, tk.EmptyAnswers)
	}
	want := map[string]int{"stop_sequence": 1, "length": 1, "end_token": 2}
	if !maps.Equal(tk.EmptyKinds, want) || !maps.Equal(tk.Finish, map[string]int{"stop_sequence": 1, "length": 4, "end_token": 2}) {
		t.Errorf("empty kinds %v, finishes %v", tk.EmptyKinds, tk.Finish)
	}
	// Ollama's 5 tokens were the 5 asked for.
	if !maps.Equal(tk.MismatchKinds, map[string]int{"stop_sequence": 1, "length": 1, "end_token": 1}) || tk.OutputMismatch != 3 {
		t.Errorf("%d mismatches by kind %v", tk.OutputMismatch, tk.MismatchKinds)
	}
	l := p.Latency
	for _, n := range []string{metric.TTFT, metric.TTFTSched, metric.TPOT} {
		if l[n].Count != 3 {
			t.Errorf("%s holds %d values, want the 3 answers with content", n, l[n].Count)
		}
	}
	if l[metric.TTFT].Min < 99 || l[metric.TPOT].Min < 19 || l[metric.TTFTUser].Count != 0 {
		t.Errorf("TTFT %+v, TPOT %+v, user TTFT %+v: empty answers leaked in", l[metric.TTFT], l[metric.TPOT], l[metric.TTFTUser])
	}
	if l[metric.E2E].Count != 7 || l[metric.E2EUser].Count != 4 || l[metric.ITL].Count != 12 {
		t.Errorf("E2E %d, user E2E %d, ITL %d: want every answer's end, 4 retried, 12 gaps", l[metric.E2E].Count, l[metric.E2EUser].Count, l[metric.ITL].Count)
	}
	// Goodput: a TTFT criterion of 30 ms is met by an answer whose first
	// token came at 20 ms, and not by an empty one that ended at 41 ms,
	// whose user waited to its end for nothing.
	crit := NewRecorder(t0, t0.Add(10*time.Second))
	crit.Goodput = Criteria{TTFT: 30 * ms}
	crit.Add(Sample{Result: empty(client.FinishLength, 4), Scheduled: t0})
	crit.Add(Sample{Result: stream(t0, 20*ms, 20*ms, 5, 1), Scheduled: t0})
	if cp, _ := crit.Point(); cp.Requests.Good != 1 {
		t.Errorf("%d good answers under a 30 ms TTFT criterion, want 1: not the empty one that ended at 41 ms", cp.Requests.Good)
	}
	if want := float64(3*100+4*7) / 10; p.Throughput.TotalTokens-p.Throughput.OutputTokens != want {
		t.Errorf("prompt throughput %v, want %v: an empty answer's prompt counts by its end", p.Throughput.TotalTokens-p.Throughput.OutputTokens, want)
	}
}

// Server-reported times (llama.cpp's timings) are averaged per point: the
// prompt per request, generation per token.
func TestRecorderServerTimings(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	rec := NewRecorder(t0, t0.Add(10*time.Second))
	for _, st := range []struct {
		prompt, predict time.Duration
		n               int
	}{{40 * ms, 100 * ms, 10}, {60 * ms, 300 * ms, 30}} {
		r := stream(t0, 100*ms, 20*ms, 5, 1)
		r.ServerPrompt, r.ServerPredict, r.ServerPredicted = st.prompt, st.predict, st.n
		rec.Add(Sample{Result: r, Scheduled: t0})
	}
	rec.Add(Sample{Result: stream(t0, 100*ms, 20*ms, 5, 1), Scheduled: t0}) // reported none
	p, _ := rec.Point()
	if st := p.ServerTimings; st == nil || st.Requests != 2 || st.PromptMsMean != 50 || st.TPOTMsMean != 10 {
		t.Errorf("server timings %+v", p.ServerTimings)
	}
}

// A server that streams tokens and never finishes a request shows no
// output throughput: only answers count.
func TestRecorderFailedRequestsAreNotThroughput(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	rec := NewRecorder(t0, t0.Add(time.Second))
	for range 8 {
		r := stream(t0, 10*ms, 1*ms, 500, 1)
		r.Err, r.Detail = client.ErrTimeout, "timeout"
		rec.Add(Sample{Result: r, Scheduled: t0})
	}
	p, _ := rec.Point()
	if p.Throughput.OutputTokens != 0 || p.Throughput.TotalTokens != 0 || p.Requests.Failed != 8 {
		t.Errorf("throughput %+v from failed requests %+v", p.Throughput, p.Requests)
	}
	ok := NewRecorder(t0, t0.Add(time.Second))
	ok.Add(Sample{Result: stream(t0, 10*ms, 1*ms, 500, 1), Scheduled: t0})
	if q, _ := ok.Point(); q.Throughput.OutputTokens == 0 {
		t.Error("a completed answer's tokens did not count")
	}
}

// M7: a mix of hundreds of models must not cost megabytes per model: each
// model's histograms keep 2 significant digits (1%), the point's own 3,
// and the model's figures stay within that precision of the point's.
func TestModelHistogramsAreSmall(t *testing.T) {
	t0 := time.Now()
	rec := NewRecorder(t0, t0.Add(10*time.Second))
	for i := range 50 {
		res := stream(t0.Add(time.Duration(i)*10*ms), time.Duration(20+i)*ms, 5*ms, 10, 1)
		rec.Add(Sample{Result: res, Scheduled: res.Sent, Model: "only"})
	}
	p, err := rec.Point()
	if err != nil {
		t.Fatal(err)
	}
	m := p.Models["only"]
	if m == nil {
		t.Fatal("no figures for the model")
	}
	h, err := result.DecodeHistogram(m.Histograms[metric.TTFT])
	if err != nil {
		t.Fatal(err)
	}
	if d := h.SignificantFigures(); d != modelSigFigs {
		t.Errorf("a model's TTFT histogram keeps %d digits, want %d", d, modelSigFigs)
	}
	whole, model := p.Latency[metric.TTFT].P99, m.Latency[metric.TTFT].P99
	near(t, "the model's TTFT p99 against the point's", model, whole, whole/100)
}

// An answer whose tokens all came in one read gives no TPOT sample: the
// issue's llama-server answer read ttft 140.13 ms, e2e 140.13 ms, three
// tokens, and TPOT p50 read 0.00 ms. The point counts such answers.
func TestRecorderOneReadHasNoTPOT(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	rec := NewRecorder(t0, t0.Add(10*time.Second))
	for i := range 4 {
		res := stream(t0, 10*ms, 10*ms, 3, 1)
		res.ChunkRead = []uint32{1, 2, 3}
		if i == 0 {
			// All three chunks in one read at 140 ms, the stream's end.
			res.FirstToken, res.End = 140*ms, 140*ms
			res.ChunkAt, res.ChunkRead = []time.Duration{140 * ms, 140 * ms, 140 * ms}, []uint32{1, 1, 1}
		}
		rec.Add(Sample{Result: res, Scheduled: t0})
	}
	p, err := rec.Point()
	if err != nil {
		t.Fatal(err)
	}
	tpot := p.Latency[metric.TPOT]
	if tpot.Count != 3 || tpot.Min <= 0 || p.Tokens.OneRead != 1 {
		t.Errorf("TPOT %+v, one-read answers %d: want 3 samples, none 0, and 1 counted", tpot, p.Tokens.OneRead)
	}
}

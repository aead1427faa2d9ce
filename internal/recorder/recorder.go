// Package recorder records request measurements into HdrHistograms and
// summarizes them as a results file's Measured. Definitions follow vLLM's
// benchmark_serving, made stricter (see DESIGN.md and the metric package):
// TTFT to the first chunk with content, ITL per chunk gap, TPOT per token,
// E2E to the last byte, each also measured from the intended send time.
package recorder

import (
	"cmp"
	"fmt"
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/client"
)

// LatencyNames lists the latency histograms every point records, in report
// order: the catalogue's unconditional latencies.
var LatencyNames = metric.Names(func(d metric.Def) bool { return d.Kind == metric.Latency && d.Only == "" })

// recordedLatencies are every latency a point may record (the conditional
// ones only when their condition holds), each summarized when present.
var recordedLatencies = metric.Names(func(d metric.Def) bool { return d.Kind == metric.Latency })

// Histogram ranges: latencies in microseconds from 1 µs to 1 h, token counts
// up to 10M, both to 3 significant digits (0.1% relative error).
const (
	maxLatencyMicros = int64(time.Hour / time.Microsecond)
	maxTokens        = 10_000_000
	sigFigs          = 3
	// modelSigFigs is the precision of each model's histograms in a mix
	// (1%): a mix may hold hundreds of models, and a histogram of 3
	// digits over this range takes ~190 KB, of 2 digits ~26 KB.
	modelSigFigs = 2
)

// SendLag is how late the client sent the request's first attempt: from
// when it was due (Scheduled, or Ready after a wait for a place under the
// suite's cap) to its send. A retry's backoff (a Retry-After obeyed) is
// the server's doing, and counts in the user's latencies, not here.
func (s Sample) SendLag() time.Duration {
	sent := s.Result.Sent
	if s.Attempts > 0 && !s.UserStart.IsZero() {
		sent = s.UserStart
	}
	due := s.Scheduled
	if s.Ready.After(due) {
		due = s.Ready
	}
	return sent.Sub(due)
}

// Sample is one request as the load generator saw it.
type Sample struct {
	*client.Result
	// Scheduled is when the request was meant to be sent.
	Scheduled time.Time
	// Ready, when later than Scheduled, is when the request got its place
	// under the suite's own max_concurrency: the wait for it is the
	// server's slowness at that cap, not the client falling behind, so
	// the send lag counts from here (the user's latencies still count
	// from Scheduled).
	Ready time.Time
	// Warmup marks requests scheduled before the measured window; they
	// count towards throughput inside the window but not towards latencies.
	Warmup bool
	// WantInput and WantOutput are the requested token counts.
	WantInput, WantOutput int
	// Attempts is how many times the request was sent under a retry
	// policy (0: the suite has none); UserStart is its first attempt's
	// send; GaveUp marks a retryable failure that was not retried again.
	Attempts  int
	UserStart time.Time
	GaveUp    bool
	// Model is the request's model in a mix ("": none): it is recorded in
	// that model's figures too.
	Model string
	// Inputs is how many inputs an embeddings request carried (0: not one).
	Inputs int
	// Images is how many images the request carried: the server counts
	// their tokens in its prompt, so the prompt is not checked against
	// WantInput.
	Images int
	// Checked marks a structured answer that was checked; Correct, one
	// that matched its schema.
	Checked, Correct bool
}

// Criteria are per-request SLOs for goodput; zero fields do not constrain.
type Criteria struct {
	TTFT, TPOT, E2E time.Duration
}

// IsZero reports whether no criterion is set.
func (c Criteria) IsZero() bool { return c == Criteria{} }

// good reports whether a successful request met every criterion.
func (c Criteria) good(res *client.Result) bool {
	// An answer of no content has no first token: its user waited to its
	// end for nothing, which the TTFT criterion judges.
	if c.TTFT > 0 && (res.FirstToken > c.TTFT || res.NoContent() && res.End > c.TTFT) {
		return false
	}
	if c.E2E > 0 && res.End > c.E2E {
		return false
	}
	if c.TPOT > 0 && res.OutputTokens > 1 && !res.NoContent() && (res.End-res.FirstToken)/time.Duration(res.OutputTokens-1) > c.TPOT {
		return false
	}
	return true
}

// Recorder accumulates one point's samples. It is not safe for concurrent
// use: the load generator feeds it from one goroutine.
type Recorder struct {
	// Goodput, when set, counts requests that met every criterion.
	Goodput Criteria
	// Slices, when set, records the point's figures over time.
	Slices *Slicer

	start, end time.Time // measured window; end zero: open until the last completion
	lastEnd    time.Time
	good       int // measured requests that met the goodput criteria
	goodIn     int // answers that met them and ended inside the window

	hists map[string]*hdrhistogram.Histogram

	sent, ok, warmup int
	attempts, gaveUp int
	canceled         int
	clientLimited    int
	abandoned        int
	clientLimitErr   string
	errs             map[string]int
	lastErr          map[string]string
	completedIn      int     // successful requests that ended inside the window
	outputIn         float64 // output tokens streamed inside the window
	promptIn         int     // prompt tokens of requests whose first token came inside the window
	sources          map[client.TokenSource]int
	outputMismatch   int // successful requests whose output differs from the request
	promptMismatch   int // ... whose server prompt count differs by more than 5%
	chunks, tokens   int
	gaps, coalesced  int // chunk gaps, and those not timed (the first read's)
	spread           int // chunk gaps timed as a share of their read's span
	// coalescedFirst counts answers whose first chunk shared its read with
	// the next; their TTFTs wait in ttftCoalesced (see Point).
	coalescedFirst int
	// oneRead counts answers of several tokens that came in one read.
	oneRead       int
	ttftCoalesced *hdrhistogram.Histogram
	reasoning     int
	outOfRange    int
	emptyAnswers  int
	usageRejected int
	// answers counted by why they ended (client.FinishKind): all, the
	// empty ones, those of another output length than asked
	finish, emptyKinds, mismatchKinds map[string]int
	// server-reported times (llama.cpp's timings), summed
	serverReqs, serverPredicted int
	serverPrompt, serverPredict time.Duration
	// models holds a recorder per model of a mix, over the same window.
	models map[string]*Recorder
	// digits is the histograms' precision in significant digits.
	digits int
	// embeddingsIn counts vectors of answers that ended inside the window;
	// batch holds the inputs per embeddings request.
	embeddingsIn int
	batch        *hdrhistogram.Histogram
	// checked and correct count structured answers.
	checked, correct int
}

// NewRecorder records a point whose measured window starts at start and
// ends at end (zero: at the last completion).
func NewRecorder(start, end time.Time) *Recorder { return newRecorder(start, end, sigFigs) }

func newRecorder(start, end time.Time, digits int) *Recorder {
	r := &Recorder{
		start: start, end: end, digits: digits,
		hists:   map[string]*hdrhistogram.Histogram{},
		errs:    map[string]int{},
		lastErr: map[string]string{},
		sources: map[client.TokenSource]int{},
	}
	for _, n := range LatencyNames {
		r.hists[n] = hdrhistogram.New(1, maxLatencyMicros, digits)
	}
	r.hists[metric.PromptTokensHistogram] = hdrhistogram.New(1, maxTokens, digits)
	r.hists[metric.OutputTokensHistogram] = hdrhistogram.New(1, maxTokens, digits)
	return r
}

func (r *Recorder) inWindow(t time.Time) bool {
	return !t.Before(r.start) && (r.end.IsZero() || t.Before(r.end))
}

func (r *Recorder) record(name string, v int64) {
	if err := r.hists[name].RecordValue(v); err != nil {
		r.outOfRange++
	}
}

// recordLazy records into a histogram made on first use: the user-perceived
// latencies exist only in points of suites that retry.
func (r *Recorder) recordLazy(name string, v int64) {
	if r.hists[name] == nil {
		r.hists[name] = hdrhistogram.New(1, maxLatencyMicros, r.digits)
	}
	r.record(name, v)
}

// recordTokens records a token count into a histogram made on first use.
func (r *Recorder) recordTokens(name string, v int64) {
	if r.hists[name] == nil {
		r.hists[name] = hdrhistogram.New(1, maxTokens, r.digits)
	}
	r.record(name, v)
}

func micros(d time.Duration) int64 { return max(int64(d/time.Microsecond), 1) }

// Add records one finished request: in its model's figures and its time
// slice, in the window's throughput, then by what it was (warm-up,
// stopped, failed, or an answer) in the counts and histograms it
// belongs to.
func (r *Recorder) Add(s Sample) {
	if s.Model != "" {
		r.addToModel(s)
	}
	if r.Slices != nil {
		r.Slices.Add(s)
	}
	res := s.Result
	end := res.Sent.Add(res.End)
	if end.After(r.lastEnd) {
		r.lastEnd = end
	}
	r.addThroughput(&s, end)
	// Goodput counts the requests request throughput counts (answers that
	// ended inside the window, warm-up ones included), so that when every
	// request meets the criteria the two are equal.
	goodReq := res.OK() && !r.Goodput.IsZero() && r.Goodput.good(res)
	if res.OK() && r.inWindow(end) {
		r.completedIn++
		if goodReq {
			r.goodIn++
		}
	}
	if !r.classify(&s) {
		return
	}
	r.ok++
	if goodReq {
		r.good++
	}
	if s.Inputs > 0 {
		r.recordEmbeddings(s)
		return
	}
	finish, empty := r.noteAnswer(&s)
	r.recordLatencies(&s, empty)
	r.recordTokenCounts(&s, finish)
}

// addToModel records the sample in its model's own figures, made on
// first use.
func (r *Recorder) addToModel(s Sample) {
	m := r.models[s.Model]
	if m == nil {
		if r.models == nil {
			r.models = map[string]*Recorder{}
		}
		m = newRecorder(r.start, r.end, modelSigFigs)
		m.Goodput = r.Goodput
		r.models[s.Model] = m
	}
	s.Model = ""
	m.Add(s)
}

// addThroughput counts what the request did inside the window, whoever
// asked for it: warm-up requests still streaming there count, and
// requests still streaming after it (cool-down) count only up to its
// end. Only answers count: tokens of a request that failed (cut, timed
// out, endless) are not throughput, so a server that streams forever
// and never finishes shows none.
func (r *Recorder) addThroughput(s *Sample, end time.Time) {
	res := s.Result
	if !res.OK() {
		return
	}
	if s.Inputs > 0 {
		// An embeddings answer: its prompt tokens and vectors count when
		// it ended, and it has no first token, output or chunks.
		if r.inWindow(end) {
			r.promptIn += res.PromptTokens
			r.embeddingsIn += res.Embeddings
		}
		return
	}
	total := 0
	for _, n := range res.ChunkTokens {
		total += int(n)
	}
	scale := 1.0
	if res.OutputTokens > 0 && total > 0 {
		scale = float64(res.OutputTokens) / float64(total) // trust usage over the per-chunk count
	}
	for i, at := range res.ChunkAt {
		if r.inWindow(res.Sent.Add(at)) {
			r.outputIn += float64(res.ChunkTokens[i]) * scale
		}
	}
	// The prompt was processed by the first token, or by the end of
	// an answer that had none.
	if first := cmp.Or(res.FirstToken, res.End); first > 0 && r.inWindow(res.Sent.Add(first)) {
		r.promptIn += res.PromptTokens
	}
}

// classify counts a request that is not a measured answer where it
// belongs (warm-up, stopped, abandoned, this machine's limit, failed)
// and counts a measured one as sent; true: it was an answer, to be
// recorded.
func (r *Recorder) classify(s *Sample) bool {
	res := s.Result
	switch {
	case s.Warmup:
		r.warmup++
		return false
	case res.Err == client.ErrCanceled:
		// Stopped by the run, not failed by the server: kept out of the
		// error rate, and the point is marked incomplete by the caller.
		r.canceled++
		return false
	case res.Err == client.ErrAbandoned:
		// A user who stopped reading on purpose: counted, not an error,
		// and its cut-short stream is no latency of an answer.
		r.abandoned++
		return false
	case res.Err == client.ErrClientLimit:
		// This machine's exhaustion, not the server's error: counted
		// apart, and the load generator flags the point.
		r.clientLimited++
		r.clientLimitErr = res.Detail
		return false
	}
	r.sent++
	if s.Attempts > 0 {
		r.attempts += s.Attempts
		if s.GaveUp {
			r.gaveUp++
		}
	}
	if !res.OK() {
		kind := string(res.Err)
		if res.Err == client.ErrHTTP {
			kind = fmt.Sprintf("http_%d", res.Status)
		}
		r.errs[kind]++
		r.lastErr[kind] = res.Detail
		return false
	}
	return true
}

// noteAnswer counts what an answer was besides its times: checked,
// a tool call, its finish, empty, its usage doubted, the server's own
// timings. It returns the finish and whether the answer had no content.
func (r *Recorder) noteAnswer(s *Sample) (finish string, empty bool) {
	res := s.Result
	if s.Checked {
		r.checked++
		if s.Correct {
			r.correct++
		}
	}
	if res.FirstToolCall > 0 {
		r.recordLazy(metric.TTFTTool, micros(res.FirstToolCall))
	}
	finish = string(cmp.Or(res.Finish, client.FinishUnknown))
	r.finish = count(r.finish, finish)
	empty = res.NoContent()
	if empty {
		// Ended normally with no content: why is its finish. It has no
		// first token, so it stays out of TTFT and TPOT (an end taken
		// for a first token would put E2E among the TTFTs, and a usage of
		// several tokens a TPOT of 0 among the TPOTs).
		r.emptyAnswers++
		r.emptyKinds = count(r.emptyKinds, finish)
	}
	if res.UsageImplausible {
		r.usageRejected++
	}
	if res.ServerPrompt > 0 || res.ServerPredict > 0 {
		r.serverReqs++
		r.serverPrompt += res.ServerPrompt
		r.serverPredict += res.ServerPredict
		r.serverPredicted += res.ServerPredicted
	}
	return finish, empty
}

// recordLatencies records an answer's latencies: send lag, TTFT (a
// coalesced first chunk's apart), E2E, the user's and the schedule's,
// TPOT and the gaps between chunks.
func (r *Recorder) recordLatencies(s *Sample, empty bool) {
	res := s.Result
	lag := res.Sent.Sub(s.Scheduled)
	r.record(metric.Lag, micros(s.SendLag()))
	switch {
	case empty:
	case res.FirstCoalesced():
		r.coalescedFirst++
		if r.ttftCoalesced == nil {
			r.ttftCoalesced = hdrhistogram.New(1, maxLatencyMicros, r.digits)
		}
		if r.ttftCoalesced.RecordValue(micros(res.FirstToken)) != nil {
			r.outOfRange++
		}
	default:
		r.record(metric.TTFT, micros(res.FirstToken))
	}
	if res.FirstAnswer > 0 {
		r.record(metric.TTFTAnswer, micros(res.FirstAnswer))
	}
	r.record(metric.E2E, micros(res.End))
	if s.Attempts > 0 {
		// From the first attempt: backoffs and failed attempts included.
		before := res.Sent.Sub(s.UserStart)
		if !empty {
			r.recordLazy(metric.TTFTUser, micros(before+res.FirstToken))
		}
		r.recordLazy(metric.E2EUser, micros(before+res.End))
	}
	if !empty {
		r.record(metric.TTFTSched, micros(res.FirstToken+lag))
	}
	r.record(metric.E2ESched, micros(res.End+lag))
	switch {
	case res.OutputTokens <= 1 || empty:
	case res.OneRead():
		// Its tokens came together: their pace was not seen.
		r.oneRead++
	default:
		r.record(metric.TPOT, micros((res.End-res.FirstToken)/time.Duration(res.OutputTokens-1)))
	}
	r.gaps += max(len(res.ChunkAt)-1, 0)
	r.coalesced += res.ChunkGaps(func(gap time.Duration, spread bool) {
		if spread {
			r.spread++ // one of a read's several chunks: a share of its span
		}
		r.record(metric.ITL, micros(gap))
	})
}

// recordTokenCounts records an answer's prompt and output tokens, and
// how they differ from what was asked.
func (r *Recorder) recordTokenCounts(s *Sample, finish string) {
	res := s.Result
	if res.PromptTokens > 0 {
		r.record(metric.PromptTokensHistogram, int64(res.PromptTokens))
		if d := res.PromptTokens - s.WantInput; s.Images == 0 && (d*20 > s.WantInput || -d*20 > s.WantInput) {
			r.promptMismatch++
		}
		if s.WantInput > 0 {
			// Beside what the server counted, over the same answers: a
			// chat template longer than the short prompts asked for shows
			// as the two distributions' difference.
			r.recordTokens(metric.PromptTokensAskedHistogram, int64(s.WantInput))
		}
	}
	r.record(metric.OutputTokensHistogram, int64(max(res.OutputTokens, 1)))
	if s.WantOutput > 0 && res.OutputTokens != s.WantOutput {
		r.outputMismatch++
		r.mismatchKinds = count(r.mismatchKinds, finish)
	}
	r.sources[res.TokenSource]++
	r.chunks += len(res.ChunkAt)
	r.tokens += res.OutputTokens
	r.reasoning += res.ReasoningTokens
}

// recordEmbeddings records a measured embeddings answer: its latency
// from send to the answer's last byte (e2e; there is no TTFT), its prompt
// tokens and its batch.
func (r *Recorder) recordEmbeddings(s Sample) {
	res := s.Result
	lag := res.Sent.Sub(s.Scheduled)
	r.record(metric.Lag, micros(s.SendLag()))
	r.record(metric.E2E, micros(res.End))
	r.record(metric.E2ESched, micros(res.End+lag))
	if s.Attempts > 0 {
		r.recordLazy(metric.E2EUser, micros(res.Sent.Sub(s.UserStart)+res.End))
	}
	if res.PromptTokens > 0 {
		r.record(metric.PromptTokensHistogram, int64(res.PromptTokens))
	}
	if r.batch == nil {
		r.batch = hdrhistogram.New(1, maxTokens, r.digits)
	}
	r.batch.RecordValue(int64(s.Inputs))
	if res.Embeddings != s.Inputs {
		r.outputMismatch++ // vectors for another number of inputs than sent
	}
	if res.UsageImplausible {
		r.usageRejected++
	}
}

// EndAt ends the measured window at t, for a point stopped early; call
// it after the last Add.
func (r *Recorder) EndAt(t time.Time) {
	if r.end.IsZero() || t.Before(r.end) {
		r.end = t
	}
	for _, m := range r.models {
		m.EndAt(t)
	}
}

// Point summarizes what was recorded: the requests, the window and its
// throughput, the latencies and tokens, the histograms, and each model's
// own figures.
func (r *Recorder) Point() (result.Measured, error) {
	coalescedFirst := r.settleCoalescedFirst()
	end := r.end
	if end.IsZero() {
		end = r.lastEnd
	}
	secs := end.Sub(r.start).Seconds()
	p := result.Measured{
		Requests:   r.requests(),
		Window:     result.Window{Start: r.start, Seconds: secs},
		Latency:    map[string]result.Summary{},
		Tokens:     r.tokenSummary(coalescedFirst),
		Histograms: map[string]string{},
	}
	if r.Slices != nil {
		p.Slices = r.Slices.Slices()
	}
	if r.batch != nil {
		b := result.Summarize(r.batch, 1)
		p.Batch = &b
	}
	if r.checked > 0 {
		p.Structured = &result.Structured{Checked: r.checked, Correct: r.correct, Rate: float64(r.correct) / float64(r.checked)}
	}
	if secs > 0 {
		p.Throughput = r.throughput(secs)
	}
	if r.serverReqs > 0 {
		st := &result.ServerTimings{Requests: r.serverReqs, PromptMsMean: millis(r.serverPrompt) / float64(r.serverReqs)}
		if r.serverPredicted > 0 {
			st.TPOTMsMean = millis(r.serverPredict) / float64(r.serverPredicted)
		}
		p.ServerTimings = st
	}
	for _, n := range recordedLatencies {
		if h := r.hists[n]; h != nil {
			p.Latency[n] = result.Summarize(h, 1000)
		}
	}
	if err := r.encodeHistograms(p.Histograms); err != nil {
		return p, err
	}
	if len(r.models) > 0 {
		// Every model's figures cover the point's window, so their
		// throughputs add up to the point's.
		p.Models = map[string]*result.Measured{}
		for name, m := range r.models {
			m.end = end
			mp, err := m.Point()
			if err != nil {
				return p, fmt.Errorf("model %s: %w", name, err)
			}
			p.Models[name] = &mp
		}
	}
	return p, nil
}

// settleCoalescedFirst decides where TTFTs of first chunks that shared
// their read go, and returns how many were kept out. Such a chunk was
// read late: its TTFT is an upper bound, kept out. When most came so, the
// server sends the first chunks with the next, no read can part them, and
// the read's stamp is the best there is: they are kept.
func (r *Recorder) settleCoalescedFirst() int {
	h := r.ttftCoalesced
	if h == nil {
		return 0
	}
	r.ttftCoalesced = nil
	if 2*r.coalescedFirst > r.coalescedFirst+int(r.hists[metric.TTFT].TotalCount()) {
		r.hists[metric.TTFT].Merge(h)
		return 0
	}
	return r.coalescedFirst
}

// requests summarizes the requests' counts.
func (r *Recorder) requests() result.Requests {
	q := result.Requests{Sent: r.sent, Completed: r.ok, Failed: r.sent - r.ok, Errors: r.errs, LastError: r.lastErr, Warmup: r.warmup, Canceled: r.canceled, Good: r.good,
		ClientLimited: r.clientLimited, ClientLimitError: r.clientLimitErr, Abandoned: r.abandoned,
		Attempts: r.attempts, GaveUp: r.gaveUp}
	if r.sent > 0 {
		q.ErrorRate = float64(r.sent-r.ok) / float64(r.sent)
	}
	return q
}

// tokenSummary summarizes the answers' tokens and chunks.
func (r *Recorder) tokenSummary(coalescedFirst int) result.Tokens {
	t := result.Tokens{
		Prompt: result.Summarize(r.hists[metric.PromptTokensHistogram], 1), Output: result.Summarize(r.hists[metric.OutputTokensHistogram], 1),
		Source: map[string]int{}, OutputMismatch: r.outputMismatch, PromptMismatch: r.promptMismatch,
		Reasoning: r.reasoning, OutOfRange: r.outOfRange, EmptyAnswers: r.emptyAnswers, UsageRejected: r.usageRejected,
		ChunkGaps: r.gaps, CoalescedGaps: r.coalesced, CoalescedFirst: coalescedFirst, SpreadGaps: r.spread, OneRead: r.oneRead,
		Finish: r.finish, EmptyKinds: r.emptyKinds, MismatchKinds: r.mismatchKinds,
	}
	if r.chunks > 0 {
		t.PerChunk = float64(r.tokens) / float64(r.chunks)
	}
	if h := r.hists[metric.PromptTokensAskedHistogram]; h != nil {
		s := result.Summarize(h, 1)
		t.PromptAsked = &s
	}
	for src, n := range r.sources {
		t.Source[string(src)] = n
	}
	return t
}

// throughput is the window's rates over its secs seconds.
func (r *Recorder) throughput(secs float64) result.Throughput {
	t := result.Throughput{
		Requests:     float64(r.completedIn) / secs,
		OutputTokens: r.outputIn / secs,
		TotalTokens:  (r.outputIn + float64(r.promptIn)) / secs,
	}
	if !r.Goodput.IsZero() {
		g := float64(r.goodIn) / secs
		t.Goodput = &g
	}
	t.Embeddings = float64(r.embeddingsIn) / secs
	return t
}

// encodeHistograms encodes every histogram into into, by name, in the
// names' order.
func (r *Recorder) encodeHistograms(into map[string]string) error {
	names := make([]string, 0, len(r.hists))
	for n := range r.hists {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		enc, err := result.EncodeHistogram(r.hists[n])
		if err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
		into[n] = enc
	}
	return nil
}

// count adds one to m[k], making m on first use: most points have one
// kind, and an absent map keeps the file as it was.
func count(m map[string]int, k string) map[string]int {
	if m == nil {
		m = map[string]int{}
	}
	m[k]++
	return m
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

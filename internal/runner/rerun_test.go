package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchci/benchci/framework/compare"
	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/framework/suitefile"
	"github.com/benchci/benchci/internal/requestlog"
)

// lateReads answers in two chunks 50 ms apart, flushed one by one, except
// that the benchmark requests numbered in late (from 1) get both chunks in
// one write: the client reads them together, as a client that fell
// behind would, and their first token's stamp is not its own.
func lateReads(t *testing.T, late func(n int64) bool) *httptest.Server {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		const chunk = `data: {"choices":[{"delta":{"content":" ok"}}]}` + "\n\n"
		fl := w.(http.Flusher)
		if !strings.Contains(string(body), "Say hello.") && late(n.Add(1)) {
			io.WriteString(w, chunk+chunk)
			fl.Flush()
		} else {
			io.WriteString(w, chunk)
			fl.Flush()
			time.Sleep(50 * time.Millisecond) // a client 50 ms behind would read them together
			io.WriteString(w, chunk)
			fl.Flush()
		}
		time.Sleep(5 * time.Millisecond)
		io.WriteString(w, `data: {"choices":[],"usage":{"prompt_tokens":8,"completion_tokens":2}}`+"\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

func runLateReads(t *testing.T, url string, reruns int) Input {
	t.Helper()
	src := fmt.Sprintf(`local b = import 'benchci.libsonnet';
b.suite {
  name: 'reruns',
  target: b.target.url('%s', model='m'),
  workload: { input_tokens: b.dist.fixed(8), output_tokens: b.dist.fixed(2), prompts: b.prompts.synthetic(calibrate=false) },
  sweep: b.sweep.rates([40], duration='500ms', warmup='0s'),
  slos: [b.slo.p99('ttft', '<', '5s')],
}`, url)
	l, err := suitefile.LoadSource("reruns.jsonnet", src, suitefile.Options{Known: Known()})
	if err != nil {
		t.Fatal(err)
	}
	return inputOf(l)
}

// stalled marks the attempts stall picks as a stalled machine would.
func stalled(stall func(attempt int) bool) func(int, *result.Validity) {
	return func(attempt int, v *result.Validity) {
		if stall(attempt) {
			v.Invalid = append(v.Invalid, fmt.Sprintf("the machine stalled (test, attempt %d)", attempt+1))
		}
	}
}

// A trial that did not measure the server is measured again: the same
// requests, the server's prefix cache emptied first, and the discarded
// attempt's evidence recorded with the trial kept.
func TestInvalidTrialIsRerun(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	bodies := map[string]int{}
	resets := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/reset_prefix_cache" {
			mu.Lock()
			resets++
			mu.Unlock()
			return
		}
		if r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		if !strings.Contains(string(body), "Say hello.") {
			mu.Lock()
			bodies[string(body)]++
			mu.Unlock()
		}
		io.WriteString(w, `data: {"choices":[{"delta":{"content":" ok"}}]}`+"\n\n"+`data: {"choices":[],"usage":{"prompt_tokens":8,"completion_tokens":1}}`+"\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	var log bytes.Buffer
	rl := requestlog.New(&log, false)
	f, err := Run(context.Background(), runLateReads(t, srv.URL, 0), Options{Requests: rl, judged: stalled(func(a int) bool { return a == 0 })})
	if err != nil {
		t.Fatal(err)
	}
	if err := rl.Close(); err != nil {
		t.Fatal(err)
	}
	p := f.Points[0]
	// The per-request log holds both attempts, each line numbered by its
	// attempt, so a reader keeps the kept attempt's lines only.
	perAttempt := map[int]int{}
	for _, line := range strings.Split(strings.TrimSpace(log.String()), "\n") {
		var r requestlog.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if !r.Warmup {
			perAttempt[r.Rerun]++
		}
	}
	// A loaded machine may void attempt 1 too: the last attempt is kept.
	last := 0
	if p.Validity != nil {
		last = len(p.Validity.Reruns)
	}
	if len(perAttempt) != last+1 || last < 1 || perAttempt[last] != p.Requests.Sent || perAttempt[0] == 0 {
		t.Errorf("measured log lines per attempt %v; want the discarded attempts from 0 and the kept attempt %d with its %d requests", perAttempt, last, p.Requests.Sent)
	}
	v := p.Validity
	// A loaded machine may add its own evidence to the first attempt's.
	if v == nil || len(v.Reruns) == 0 || !strings.Contains(v.Reruns[0], "the machine stalled (test, attempt 1)") {
		t.Fatalf("validity %+v", v)
	}
	mu.Lock()
	defer mu.Unlock()
	if resets == 0 || p.PrefixCacheReset == "" {
		t.Errorf("the rerun did not empty the prefix cache first (%d resets, %q)", resets, p.PrefixCacheReset)
	}
	twice := 0
	for _, n := range bodies {
		if n >= 2 {
			twice++
		}
	}
	// Every request of the discarded attempt was sent again.
	if p.Requests.Sent == 0 || twice < p.Requests.Sent {
		t.Errorf("%d distinct requests, %d sent at least twice, %d in the kept trial", len(bodies), twice, p.Requests.Sent)
	}
}

// A machine that stays busy through every rerun leaves the point
// inconclusive: its SLOs neither pass nor fail, and a gate says so.
func TestStillInvalidIsInconclusive(t *testing.T) {
	t.Parallel()
	srv := lateReads(t, func(int64) bool { return false })
	always := stalled(func(int) bool { return true })
	f, err := Run(context.Background(), runLateReads(t, srv.URL, 0), Options{Reruns: 1, judged: always})
	if err != nil {
		t.Fatal(err)
	}
	p := f.Points[0]
	if p.Valid() || len(p.Validity.Reruns) != 1 || !slices.Contains(p.Validity.Invalid, "the machine stalled (test, attempt 2)") {
		t.Fatalf("validity %+v", p.Validity)
	}
	if s := f.SLOs[0]; s.Pass || !s.Inconclusive {
		t.Errorf("SLO %+v", s)
	}
	r := compare.WithoutBaseline(f)
	if r.Failed() || !r.Inconclusive() || r.Count(compare.Inconclusive) != 1 {
		t.Errorf("gate: failed %v, inconclusive %v, rows %+v", r.Failed(), r.Inconclusive(), r.Rows)
	}
	// Without reruns it is judged at once.
	f, err = Run(context.Background(), runLateReads(t, srv.URL, 0), Options{Reruns: -1, judged: always})
	if err != nil {
		t.Fatal(err)
	}
	if v := f.Points[0].Validity; v == nil || len(v.Reruns) != 0 || len(v.Invalid) == 0 {
		t.Errorf("no reruns: %+v", v)
	}
}

// First chunks that come with the next one have the read's stamp: their
// TTFTs are kept out and counted. Without any sign that the client fell
// behind, it is the server's framing, and the trial stands.
func TestFirstChunksReadTogether(t *testing.T) {
	t.Parallel()
	srv := lateReads(t, func(n int64) bool { return n%4 == 0 })
	f, err := Run(context.Background(), runLateReads(t, srv.URL, 0), Options{Reruns: -1})
	if err != nil {
		t.Fatal(err)
	}
	p := f.Points[0]
	n, ttfts := p.Tokens.CoalescedFirst, int(p.Latency["ttft"].Count)
	// The server coalesces one request in four; a client that fell behind
	// (a stall of the loaded machine) reads more together, rightly.
	behind := p.Validity != nil && p.Validity.MaxStallMs > 0 || p.Latency[metric.Lag].P99 > 10
	if n == 0 || n+ttfts != p.Requests.Completed || (n > p.Requests.Completed/3 && !behind) {
		t.Errorf("%d first chunks read together, %d TTFTs, %d answers", n, ttfts, p.Requests.Completed)
	}
	// Invalid only where the client shows it fell behind: a stall, or a
	// send lag over 10 ms (a busy machine's).
	if !p.Valid() && p.Validity.MaxStallMs == 0 && p.Latency[metric.Lag].P99 <= 10 {
		t.Errorf("invalid without the client falling behind: %q", p.Validity.Invalid)
	}
}

// A point's attempts have a deadline: attempts that overrun their plan
// (here, a clock that moves an hour at each look) end the reruns before
// their count does, and the trial says why it was not measured again.
func TestRerunsStopAtTheirDeadline(t *testing.T) {
	t.Parallel()
	srv := lateReads(t, func(int64) bool { return false })
	var mu sync.Mutex
	at := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	hourly := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		at = at.Add(time.Hour)
		return at
	}
	always := stalled(func(int) bool { return true })
	f, err := Run(context.Background(), runLateReads(t, srv.URL, 0), Options{Reruns: MaxReruns, judged: always, now: hourly})
	if err != nil {
		t.Fatal(err)
	}
	v := f.Points[0].Validity
	if v == nil || len(v.Reruns) != 0 || !strings.Contains(strings.Join(v.Invalid, "; "), "no rerun after attempt 1: the point's attempts took 2h0m0s, past their deadline of") {
		t.Fatalf("validity %+v", v)
	}
	if _, err := Run(context.Background(), runLateReads(t, srv.URL, 0), Options{Reruns: MaxReruns + 1}); err == nil || !strings.Contains(err.Error(), "more than the 10") {
		t.Errorf("%d reruns: %v", MaxReruns+1, err)
	}
}

func TestRerunDeadline(t *testing.T) {
	for _, tc := range []struct {
		planned, first time.Duration
		reruns         int
		want           time.Duration
	}{
		{time.Minute, 3 * time.Minute, 2, 3*time.Minute + RerunSlack},
		{0, 3 * time.Minute, 2, 9*time.Minute + RerunSlack}, // a count of requests: the first attempt's time
		{30 * time.Second, time.Second, 0, 30*time.Second + RerunSlack},
	} {
		if got := rerunDeadline(tc.planned, tc.first, tc.reruns); got != tc.want {
			t.Errorf("rerunDeadline(%v, %v, %d) = %v, want %v", tc.planned, tc.first, tc.reruns, got, tc.want)
		}
	}
}

// A server that fails every request fails the gate even on a machine
// that stalled every trial: HTTP 500s are not the machine's doing, so
// the verdict is a failure (exit 1), never "inconclusive, rerun it".
func TestServerErrorsFailAStalledTrial(t *testing.T) {
	t.Parallel()
	// The first request (the preflight) is answered; every later one fails.
	var failing atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		if failing.Load() {
			http.Error(w, `{"error":"boom"}`, http.StatusInternalServerError)
			return
		}
		failing.Store(true)
		streamTokens(w, 2)
		io.WriteString(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	always := stalled(func(int) bool { return true })
	in := runLateReads(t, srv.URL, 0)
	in.Suite.SLOs = append(in.Suite.SLOs, suite.SLO{Metric: "error_rate", Op: "<=", Threshold: 0.01})
	f, err := Run(context.Background(), in, Options{Reruns: -1, judged: always})
	if err != nil {
		t.Fatal(err)
	}
	p := f.Points[0]
	if p.Valid() || p.Requests.ServerFailed() != p.Requests.Sent || p.Requests.Sent == 0 {
		t.Fatalf("point: valid %v, requests %+v", p.Valid(), p.Requests)
	}
	r := compare.WithoutBaseline(f)
	if !r.Failed() {
		t.Errorf("gate: failed %v, inconclusive %v, SLOs %+v", r.Failed(), r.Inconclusive(), f.SLOs)
	}
}

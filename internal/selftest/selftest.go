// Package selftest measures benchci's own client against the simulator on
// loopback, where the true timings are known: how much the client adds to
// TTFT, and the highest open-loop rate the load generator holds. A load
// generator that saturates before the server reports the client's limits as
// the server's; these figures say where that starts on a given machine.
package selftest

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/client"
	"github.com/benchci/benchci/internal/loadgen"
	"github.com/benchci/benchci/internal/netstamp"
	"github.com/benchci/benchci/internal/sim"
	"github.com/benchci/benchci/internal/workload"
)

// TimingSource says where the client's chunk times come from on this
// machine.
func TimingSource() string {
	if netstamp.Ready(time.Second) {
		return "kernel receive stamps (SO_TIMESTAMPNS)"
	}
	return "the time each read returned (this machine gives no kernel receive stamps)"
}

// Overhead is the client-added TTFT at one concurrency.
type Overhead struct {
	Concurrency int
	Requests    int
	// Added is client-measured TTFT minus the simulator's own (handler entry
	// to first content flushed), in milliseconds: request write, HTTP
	// parsing on both sides, loopback, SSE and JSON parsing.
	Added result.Summary
	// SendSide and ReceiveSide split Added, in milliseconds: from the
	// client's send time to the request's arrival at the server, and from
	// the server handing the first chunk to its connection to the client's
	// time for it.
	SendSide, ReceiveSide result.Summary
	// ServerTTFT is the simulator's own TTFT, for scale.
	ServerTTFT result.Summary
	// ITLError is, for every gap between chunks, the client's ITL minus
	// the gap between the server's flushes of the same two chunks, in
	// milliseconds, as an absolute value.
	ITLError result.Summary
	Errors   int
	// Behind says how the client fell behind, when it did (the load
	// generator's evidence: its workers' send lag, a stalled process,
	// first tokens read late). Added then understates the client's cost:
	// a request the client was late to send, or a first token it was late
	// to read, is not in it.
	Behind []string
	// LagP99 is the 99th percentile of the workers' send lag, in ms: how
	// long after an answer ended its worker sent the next request.
	LagP99 float64
}

// overheadProfile never queues: every stream is decoding at once, so the
// server-side TTFT is one prefill step and the difference is the client's.
func overheadProfile(concurrency int) sim.Profile {
	p, _ := sim.Lookup("llama3-8b-h100")
	p.Name = "selftest"
	p.MaxNumSeqs = max(concurrency*2, 256)
	p.MaxBatchedTokens = 1 << 20
	return p
}

// tracing pairs each request's client result with the simulator's trace.
type tracing struct {
	cl     *client.Client
	mu     sync.Mutex
	server map[string]sim.Trace
	added  *hdrhistogram.Histogram
	srvH   *hdrhistogram.Histogram
	send   *hdrhistogram.Histogram
	recv   *hdrhistogram.Histogram
	itlErr *hdrhistogram.Histogram
	errs   int
	// from excludes the warm-up, as the load generator does: the first
	// requests also open every connection at once.
	from time.Time
}

func (t *tracing) Do(ctx context.Context, body []byte, id string, res *client.Result) {
	t.cl.Do(ctx, body, id, res)
	t.mu.Lock()
	defer t.mu.Unlock()
	tr, ok := t.server[id]
	delete(t.server, id)
	if res.Sent.Before(t.from) {
		return
	}
	if !res.OK() || !ok || tr.FirstToken.IsZero() {
		if res.Err != client.ErrCanceled {
			t.errs++
		}
		return
	}
	srv := tr.FirstToken.Sub(tr.Arrived)
	t.srvH.RecordValue(max(srv.Microseconds(), 1))
	// Microsecond resolution with an offset: the difference is small and
	// positive, and the histogram only holds positive values.
	t.added.RecordValue(max((res.FirstToken-srv).Nanoseconds()/100, 1)) // in 0.1 µs
	t.send.RecordValue(max(tr.Arrived.Sub(res.Sent).Nanoseconds()/100, 1))
	t.recv.RecordValue(max(res.Sent.Add(res.FirstToken).Sub(tr.FirstToken).Nanoseconds()/100, 1))
	if len(tr.Flushed) == len(res.ChunkAt) {
		for i := 1; i < len(res.ChunkAt); i++ {
			client := res.ChunkAt[i] - res.ChunkAt[i-1]
			server := tr.Flushed[i].Sub(tr.Flushed[i-1])
			d := client - server
			if d < 0 {
				d = -d
			}
			t.itlErr.RecordValue(max(d.Nanoseconds()/100, 1))
		}
	}
}

// ClientOverhead runs a closed loop at the given concurrency for d and
// returns the TTFT the client adds.
func ClientOverhead(ctx context.Context, concurrency int, d time.Duration) (Overhead, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv := sim.New(overheadProfile(concurrency))
	t := &tracing{server: map[string]sim.Trace{}, added: hdrhistogram.New(1, 10_000_000_000, 3), srvH: hdrhistogram.New(1, 3_600_000_000, 3),
		itlErr: hdrhistogram.New(1, 10_000_000_000, 3), send: hdrhistogram.New(1, 10_000_000_000, 3),
		recv: hdrhistogram.New(1, 10_000_000_000, 3)}
	srv.KeepChunkTimes = true
	srv.OnTrace = func(tr sim.Trace) {
		t.mu.Lock()
		t.server[tr.ID] = tr
		t.mu.Unlock()
	}
	u, err := srv.Listen(ctx, "127.0.0.1:0")
	if err != nil {
		return Overhead{}, err
	}
	t.cl, err = client.New(client.Options{BaseURL: u, API: "chat", Model: "m", IgnoreEOS: true, Timeout: time.Minute})
	if err != nil {
		return Overhead{}, err
	}
	defer t.cl.CloseIdle()
	// Output lengths vary (16 to 48 tokens) so that streams finish at
	// different steps: identical requests in a closed loop would all end,
	// and all send their next request, in the same instant, and measure
	// that burst instead of the client.
	bodies := make([][]byte, 33)
	for i := range bodies {
		if bodies[i], err = t.cl.Body("", prompt(64), 16+i); err != nil {
			return Overhead{}, err
		}
	}
	n := 0
	src := func() (loadgen.Item, error) {
		n++
		return loadgen.Item{Body: bodies[(n*7)%len(bodies)], WantInput: 64}, nil
	}
	t.from = time.Now().Add(d / 5)
	out, err := loadgen.Run(ctx, t, loadgen.Config{Mode: loadgen.ClosedLoop, Concurrency: concurrency, Warmup: d / 5, Duration: d}, src)
	if err != nil {
		return Overhead{}, err
	}
	// The scale is 0.1 µs per unit: 10,000 units per ms.
	return Overhead{Concurrency: concurrency, Requests: out.Requests.Sent,
		Added: result.Summarize(t.added, 10_000), ServerTTFT: result.Summarize(t.srvH, 1000),
		ITLError: result.Summarize(t.itlErr, 10_000), Errors: t.errs,
		SendSide: result.Summarize(t.send, 10_000), ReceiveSide: result.Summarize(t.recv, 10_000),
		Behind: out.Validity.Invalid, LagP99: out.Latency[metric.Lag].P99}, nil
}

func prompt(words int) string {
	b := make([]byte, 0, words*5)
	for i := range words {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, "word"...)
	}
	return string(b)
}

// RatePoint is how the load generator held one open-loop rate.
type RatePoint struct {
	Target        float64
	ScheduledRate float64
	SendRate      float64
	// Completed is successful completions per second inside the window.
	Completed float64
	LagP99    float64 // ms
	Errors    int
	// ErrorKinds counts the errors by kind; LastError has the latest
	// text of each.
	ErrorKinds map[string]int
	LastError  map[string]string
	Saturated  bool
	Reason     string
	// ClientCPU and ServerCPU are the cores each used over the point
	// (CPU time / wall time), when the server ran in another process;
	// zero otherwise. On a machine whose cores both share, they say which
	// side ran out first.
	ClientCPU, ServerCPU float64
}

// Held reports whether the rate was held within 1%: sent and completed at
// no less than 99% of the scheduled rate, without errors.
func (r RatePoint) Held() bool {
	return !r.Saturated && r.Errors == 0 && r.SendRate >= 0.99*r.ScheduledRate && r.Completed >= 0.99*r.ScheduledRate
}

// fastProfile makes requests cheap to serve: four 1 ms steps and no
// batching limit, so the client is what saturates.
func fastProfile() sim.Profile {
	return sim.Profile{Name: "selftest-fast", Model: "m", MaxNumSeqs: 1 << 20, MaxBatchedTokens: 1 << 30,
		StepBase: time.Millisecond, TokensPerStep: 1, MaxModelLen: 1 << 20}
}

// OpenLoopRate runs one constant-rate open-loop point of d with short
// requests (8 input, 4 output tokens) against a fast simulator in this
// process.
func OpenLoopRate(ctx context.Context, rate float64, d time.Duration) (RatePoint, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	u, err := sim.New(fastProfile()).Listen(ctx, "127.0.0.1:0")
	if err != nil {
		return RatePoint{}, err
	}
	return openLoop(ctx, u, rate, d)
}

// OpenLoopRateExternal runs the same point against a simulator in another
// process, and reports the cores the client and the simulator used.
func OpenLoopRateExternal(ctx context.Context, srv *External, rate float64, d time.Duration) (RatePoint, error) {
	start, cpu0 := time.Now(), cpuTime()
	srv0, ok := srv.CPU()
	p, err := openLoop(ctx, srv.URL, rate, d)
	wall := time.Since(start).Seconds()
	p.ClientCPU = (cpuTime() - cpu0).Seconds() / wall
	if srv1, ok1 := srv.CPU(); ok && ok1 {
		p.ServerCPU = (srv1 - srv0).Seconds() / wall
	}
	return p, err
}

func openLoop(ctx context.Context, u string, rate float64, d time.Duration) (RatePoint, error) {
	cl, err := client.New(client.Options{BaseURL: u, API: "completions", Model: "m", IgnoreEOS: true, Timeout: time.Minute})
	if err != nil {
		return RatePoint{}, err
	}
	defer cl.CloseIdle()
	body, err := cl.Body("", prompt(8), 4)
	if err != nil {
		return RatePoint{}, err
	}
	src := func() (loadgen.Item, error) { return loadgen.Item{Body: body, WantInput: 8, WantOutput: 4}, nil }
	arrivals, err := workload.NewArrivals(suite.Arrival{Kind: "constant"}, rate, 0, 0, nil)
	if err != nil {
		return RatePoint{}, err
	}
	out, err := loadgen.Run(ctx, cl, loadgen.Config{Mode: loadgen.OpenLoop, Rate: rate, Arrivals: arrivals, Warmup: time.Second, Duration: d}, src)
	if err != nil {
		return RatePoint{}, err
	}
	return RatePoint{
		Target: rate, ScheduledRate: out.Schedule.ScheduledRate, SendRate: out.Schedule.SendRate,
		Completed: out.Throughput.Requests, LagP99: out.Latency[metric.Lag].P99,
		Errors: out.Requests.Failed, ErrorKinds: out.Requests.Errors, LastError: out.Requests.LastError,
		Saturated: out.Schedule.ClientSaturated, Reason: out.Schedule.Reason,
	}, nil
}

// String renders the point as a table row.
func (r RatePoint) String() string {
	held := "held"
	if !r.Held() {
		held = "NOT held"
		if r.Reason != "" {
			held += ": " + r.Reason
		}
	}
	cpu := ""
	if r.ClientCPU > 0 {
		cpu = fmt.Sprintf("  cores: client %.2f, simulator %.2f", r.ClientCPU, r.ServerCPU)
	}
	errs := strconv.Itoa(r.Errors)
	if r.Errors > 0 {
		kinds := make([]string, 0, len(r.ErrorKinds))
		for k, n := range r.ErrorKinds {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
		}
		sort.Strings(kinds)
		errs += " (" + strings.Join(kinds, ", ") + ")"
	}
	return fmt.Sprintf("%8s req/s  sent %9.1f  completed %9.1f  lag p99 %7.2f ms  errors %s%s  %s",
		strconv.FormatFloat(r.Target, 'g', -1, 64), r.SendRate, r.Completed, r.LagP99, errs, cpu, held)
}

// Package faultproxy is a reverse proxy that puts faults in front of any
// OpenAI-compatible server: added latency, 429 and 503 answers with
// Retry-After, connection resets, stalls mid-stream and a slow first
// byte. A team can then test its client's timeout and retry policy, and
// benchci's figures, against the real engine rather than the simulator.
//
// Faults apply to POST requests (the completions); everything else
// (/v1/models, /metrics, health probes) passes through untouched, so the
// engine is still recognized and its metrics read. Each POST draws one
// fault, or none, from a seeded source, so a run's faults are its own but
// their rates are what was asked.
package faultproxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Faults configure the proxy. Rates are per POST request and add up to at
// most 1.
type Faults struct {
	// Latency is added before every POST is forwarded: a network or a
	// gateway in front of the engine.
	Latency time.Duration
	// Rate429 and Rate503 answer at once with that status, and
	// Retry-After (whole seconds, rounded up) when RetryAfter is set.
	Rate429, Rate503 float64
	RetryAfter       time.Duration
	// ResetRate drops the connection after the first chunk of the answer.
	ResetRate float64
	// StallRate pauses the answer for Stall after its first chunk.
	StallRate float64
	Stall     time.Duration
	// SlowFirstByte holds every answer's first bytes back that long.
	SlowFirstByte time.Duration
	// Seed seeds the draws (0: 1).
	Seed uint64
}

// Check reports faults that cannot be applied.
func (f Faults) Check() error {
	rates := []float64{f.Rate429, f.Rate503, f.ResetRate, f.StallRate}
	sum := 0.0
	for _, r := range rates {
		if r < 0 || r > 1 {
			return fmt.Errorf("fault rates must be between 0 and 1, got %v", r)
		}
		sum += r
	}
	switch {
	case sum > 1:
		return fmt.Errorf("fault rates add up to %v, more than 1", sum)
	case f.Latency < 0 || f.RetryAfter < 0 || f.Stall < 0 || f.SlowFirstByte < 0:
		return errors.New("durations must not be negative")
	case f.StallRate > 0 && f.Stall == 0:
		return errors.New("a stall rate needs a stall duration")
	}
	return nil
}

// kind is the fault drawn for one request.
type kind int

const (
	none kind = iota
	tooMany
	unavailable
	reset
	stall
)

// Counts are what the proxy did, for tests and the log.
type Counts struct {
	Requests, TooMany, Unavailable, Resets, Stalls int64
}

// Proxy is the handler. Use New.
type Proxy struct {
	f      Faults
	rp     *httputil.ReverseProxy
	mu     sync.Mutex
	rng    *rand.Rand
	counts struct{ requests, tooMany, unavailable, resets, stalls atomic.Int64 }
}

// New returns a proxy to upstream (a base URL such as http://127.0.0.1:8000).
func New(upstream string, f Faults) (*Proxy, error) {
	if err := f.Check(); err != nil {
		return nil, fmt.Errorf("faultproxy: %w", err)
	}
	u, err := url.Parse(upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("faultproxy: upstream %q is not an http(s) base URL", upstream)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1 // stream every chunk as it comes: TTFT and ITL pass through
	// A client that gives up mid-stream is no news: the proxy's own log
	// stays quiet.
	rp.ErrorLog = log.New(io.Discard, "", 0)
	seed := f.Seed
	if seed == 0 {
		seed = 1
	}
	return &Proxy{f: f, rp: rp, rng: rand.New(rand.NewPCG(seed, 0xfa17))}, nil
}

// Counts returns what the proxy has done so far.
func (p *Proxy) Counts() Counts {
	c := &p.counts
	return Counts{Requests: c.requests.Load(), TooMany: c.tooMany.Load(), Unavailable: c.unavailable.Load(), Resets: c.resets.Load(), Stalls: c.stalls.Load()}
}

func (p *Proxy) draw() kind {
	p.mu.Lock()
	x := p.rng.Float64()
	p.mu.Unlock()
	f := p.f
	for _, c := range []struct {
		rate float64
		k    kind
	}{{f.Rate429, tooMany}, {f.Rate503, unavailable}, {f.ResetRate, reset}, {f.StallRate, stall}} {
		if x < c.rate {
			return c.k
		}
		x -= c.rate
	}
	return none
}

// maxBody bounds a request body the proxy holds.
const maxBody = 64 << 20

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		p.rp.ServeHTTP(w, r)
		return
	}
	p.counts.requests.Add(1)
	// The body is read whole before it goes upstream. Streamed through,
	// the upstream transport's last read of it (the one that finds its
	// end) can come after the answer's head, which net/http's server
	// forbids: it closes the body when a response begins, the transport
	// takes that for a failed request and drops the upstream connection,
	// and the client sees its stream cut a millisecond in.
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		http.Error(w, "request body unreadable or above 64 MiB", http.StatusBadRequest)
		return
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	if d := p.f.Latency; d > 0 && !sleep(r.Context(), d) {
		return
	}
	k := p.draw()
	switch k {
	case tooMany, unavailable:
		status, msg := http.StatusTooManyRequests, "rate limited by benchci's fault proxy"
		if k == unavailable {
			status, msg = http.StatusServiceUnavailable, "unavailable by benchci's fault proxy"
			p.counts.unavailable.Add(1)
		} else {
			p.counts.tooMany.Add(1)
		}
		if ra := p.f.RetryAfter; ra > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int((ra+time.Second-1)/time.Second)))
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"message":%q,"type":"fault_proxy"}}`, msg)
		return
	case reset:
		p.counts.resets.Add(1)
	case stall:
		p.counts.stalls.Add(1)
	}
	p.rp.ServeHTTP(&faultWriter{ResponseWriter: w, p: p, kind: k, ctx: r.Context()}, r)
}

// faultWriter applies a fault at the answer's first bytes.
type faultWriter struct {
	http.ResponseWriter
	p       *Proxy
	kind    kind
	ctx     context.Context
	started bool
}

func (fw *faultWriter) Write(b []byte) (int, error) {
	if fw.started {
		return fw.ResponseWriter.Write(b)
	}
	fw.started = true
	if d := fw.p.f.SlowFirstByte; d > 0 && !sleep(fw.ctx, d) {
		return 0, fw.ctx.Err()
	}
	if fw.kind == none {
		return fw.ResponseWriter.Write(b)
	}
	// The fault strikes after the first event: one read may hold several,
	// and a reset after all of them would cut nothing.
	head, tail := b, []byte(nil)
	if i := bytes.Index(b, []byte("\n\n")); i >= 0 {
		head, tail = b[:i+2], b[i+2:]
	}
	n, err := fw.ResponseWriter.Write(head)
	if err != nil {
		return n, err
	}
	fw.Flush()
	switch fw.kind {
	case reset:
		// Drop the connection: the client sees the stream cut.
		panic(http.ErrAbortHandler)
	case stall:
		if !sleep(fw.ctx, fw.p.f.Stall) {
			return n, fw.ctx.Err()
		}
	}
	m, err := fw.ResponseWriter.Write(tail)
	return n + m, err
}

func (fw *faultWriter) Flush() {
	if f, ok := fw.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (fw *faultWriter) Unwrap() http.ResponseWriter { return fw.ResponseWriter }

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Listen serves the proxy on addr until ctx ends and returns its base URL.
func (p *Proxy) Listen(ctx context.Context, addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("faultproxy: %w", err)
	}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	go srv.Serve(ln)
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	return "http://" + ln.Addr().String(), nil
}

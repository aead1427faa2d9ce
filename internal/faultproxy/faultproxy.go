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
	"encoding/json"
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
	"strings"
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
	rp.ModifyResponse = checkAnswer
	rp.ErrorHandler = failed
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

// maxBody bounds a request body: a larger one is answered 413. Bodies are
// streamed upstream as they come, never held, so the bound is on what the
// upstream is asked to take, not on the proxy's memory.
const maxBody = 64 << 20

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength > maxBody {
		answer(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body of %d bytes is above the proxy's %d MiB", r.ContentLength, maxBody>>20))
		return
	}
	if r.Method != http.MethodPost {
		p.forward(w, r)
		return
	}
	p.counts.requests.Add(1)
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
		answer(w, status, msg)
		return
	case reset:
		p.counts.resets.Add(1)
	case stall:
		p.counts.stalls.Add(1)
	}
	p.forward(&faultWriter{ResponseWriter: w, p: p, kind: k, ctx: r.Context()}, r)
}

// forward sends a request upstream, its body streamed as it comes (no
// fault needs the body, so nothing of it is held), and relays the answer.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		p.rp.ServeHTTP(w, r)
		return
	}
	// The answer may come back while the body still streams: the upstream
	// transport's last read of it (the one that finds its end) can come
	// after the answer's head. By default net/http's server then reads
	// the rest of the body itself and closes it, the transport takes that
	// for a failed request and drops the upstream connection, and the
	// client sees its stream cut a millisecond in. Full duplex leaves the
	// body to the transport.
	rc := http.NewResponseController(w)
	rc.EnableFullDuplex()
	in := r.Body
	body := &clientBody{r: http.MaxBytesReader(nil, in, maxBody)}
	r = r.WithContext(context.WithValue(r.Context(), bodyKey{}, body))
	r.Body = body
	defer func() {
		// The transport can still be reading the body once the answer is
		// relayed (an upstream that answered without reading it all), and
		// the server must not find the body open when the handler
		// returns: closed after the handler, the end of the body would
		// start the server's wait for the next request while it reads it.
		// A read still waiting for the client is ended first.
		if !body.ended() {
			rc.SetReadDeadline(time.Now())
		}
		in.Close()
	}()
	p.rp.ServeHTTP(w, r)
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

// answer writes the proxy's own answer, as OpenAI-compatible servers
// write an error.
func answer(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"message": msg, "type": "fault_proxy"}})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if status == http.StatusRequestEntityTooLarge || status == http.StatusBadRequest || status == http.StatusRequestTimeout {
		// The rest of the body is not read: the connection cannot carry
		// another request.
		h.Set("Connection", "close")
	}
	w.WriteHeader(status)
	w.Write(b)
}

// clientBody is a request body on its way upstream; it keeps the error
// that ended reading it, so that a failed forward can be told apart: the
// client's body (too large, cut, too slow) or the upstream.
type clientBody struct {
	r   io.Reader
	mu  sync.Mutex
	err error // io.EOF once read whole
}

// bodyKey holds a request's *clientBody in its context: the reverse proxy
// forwards the body wrapped.
type bodyKey struct{}

func (b *clientBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil {
		b.mu.Lock()
		if b.err == nil {
			b.err = err
		}
		b.mu.Unlock()
	}
	return n, err
}

// Close leaves the body to the handler, which closes it once done.
func (b *clientBody) Close() error { return nil }

// failed is the error that ended reading the body, if not its end.
func (b *clientBody) failed() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err == io.EOF {
		return nil
	}
	return b.err
}

// ended says whether the body was read to its end or to an error.
func (b *clientBody) ended() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err != nil
}

// failed answers a request that could not be forwarded, or whose answer
// could not be read before any of it reached the client: 413 for a body
// above the limit, 400 or 408 for a body the client did not send whole,
// and 502 Bad Gateway, with the reason, for an upstream that could not be
// reached or answered what is not HTTP.
func failed(w http.ResponseWriter, r *http.Request, err error) {
	if fw, ok := w.(*faultWriter); ok {
		w = fw.ResponseWriter // the proxy's own answer takes no fault
	}
	if r.Context().Err() != nil {
		return // the client has gone: no one to answer
	}
	if b, ok := r.Context().Value(bodyKey{}).(*clientBody); ok {
		var tooLarge *http.MaxBytesError
		var timeout net.Error
		switch berr := b.failed(); {
		case errors.As(berr, &tooLarge):
			answer(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body above the proxy's %d MiB", tooLarge.Limit>>20))
			return
		case errors.As(berr, &timeout) && timeout.Timeout():
			answer(w, http.StatusRequestTimeout, "request body not received in time")
			return
		case berr != nil:
			answer(w, http.StatusBadRequest, "request body unreadable: "+short(berr))
			return
		}
	}
	if errors.Is(err, io.EOF) {
		answer(w, http.StatusBadGateway, "upstream closed the connection without an answer")
		return
	}
	answer(w, http.StatusBadGateway, "upstream failed: "+short(err))
}

// short is an error's text, cut to a line: it may quote the upstream.
func short(err error) string {
	s := []rune(strings.ToValidUTF8(err.Error(), "?"))
	if len(s) > 200 {
		s = append(s[:200], '.', '.', '.')
	}
	return string(s)
}

// firstRead is how much of an answer's body is read before its head goes
// to the client: what the reverse proxy reads at a time.
const firstRead = 32 << 10

// checkAnswer refuses an upstream answer's status that no HTTP answer
// has (net/http reads "000" as 0, and writing it panics the handler), and
// reads the first bytes of its body before the reverse proxy writes its
// head to the client. Once the head is written,
// a body that fails can only be cut, and one that fails before its first
// byte reached the client as a connection closed without a word (the
// head, still buffered, went with it); read first, the failure becomes a
// 502. The head now reaches the client with the answer's first bytes
// rather than as soon as the upstream sends it: the time to the first
// byte, and to the first token, is the same.
func checkAnswer(res *http.Response) error {
	if res.StatusCode < 100 || res.StatusCode > 999 {
		return fmt.Errorf("answer with status %d", res.StatusCode)
	}
	if res.StatusCode < http.StatusOK || res.ContentLength == 0 || res.Body == nil || res.Body == http.NoBody {
		return nil // 1xx and 101 (a switched protocol's stream) or nothing to read
	}
	buf := make([]byte, firstRead)
	var n int
	var err error
	for n == 0 && err == nil {
		n, err = res.Body.Read(buf)
	}
	if n == 0 && err != io.EOF {
		return fmt.Errorf("answer %d unreadable: %w", res.StatusCode, err)
	}
	res.Body = &primed{ReadCloser: res.Body, head: buf[:n], err: err}
	return nil
}

// primed is a body whose first bytes, and the error that came with them,
// were read ahead.
type primed struct {
	io.ReadCloser
	head []byte
	err  error
}

func (p *primed) Read(b []byte) (int, error) {
	if len(p.head) > 0 {
		n := copy(b, p.head)
		p.head = p.head[n:]
		if len(p.head) == 0 {
			p.head = nil // the buffer goes with it
		}
		return n, nil
	}
	if p.err != nil {
		return 0, p.err
	}
	return p.ReadCloser.Read(b)
}

// Listen serves the proxy on addr until ctx ends and returns its base URL.
func (p *Proxy) Listen(ctx context.Context, addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("faultproxy: %w", err)
	}
	srv := &http.Server{
		Handler: p,
		// A client gets this long for its request's head, and for its
		// whole request (a 64 MiB body at 220 kB/s), so that a slow sender
		// holds no connection to the upstream for ever. The answer is not
		// bounded: a stream lasts as long as the completion.
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       5 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	go srv.Serve(ln)
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	return "http://" + ln.Addr().String(), nil
}

package client

import (
	"bufio"
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/benchci/benchci/internal/netstamp"
)

// transport is a purpose-built HTTP/1.1 client for one streaming endpoint.
//
// net/http's Transport runs two goroutines per connection (readLoop and
// writeLoop) beside the caller's, and buffers of its own; at thousands of
// open streams those stacks were 40% of the client's memory. Here the
// goroutine that sends a request also reads its stream, straight from the
// connection, and nothing else runs per connection. Reading the socket
// itself also lets the client ask the kernel when bytes arrived (package
// netstamp), so a chunk's time does not include the wait for this process to
// be scheduled.
//
// It speaks only what the benchmark needs: POST with a known length,
// keep-alive, chunked or length-delimited or close-delimited responses,
// TLS with HTTP/1.1 negotiated (HTTP/2 multiplexing would change what is
// measured and no serving engine needs it).
type transport struct {
	scheme  string
	addr    string // host:port to dial
	host    string // Host header
	path    string // request target
	tls     *tls.Config
	dialer  net.Dialer
	sem     chan struct{} // bounds connections; nil: no bound
	mu      sync.Mutex
	idle    []*conn
	maxIdle int
	// Servers such as llama.cpp's close every connection after its
	// response while promising keep-alive. Pooled connections are then
	// always found closed (stale), never reused (reusedOK): after a few,
	// pooling stops for this target, and every request dials.
	stale, reusedOK atomic.Int64
	noPool          atomic.Bool
}

// stopPoolingAfter is how many pooled connections the server must have
// closed, with none reused, before pooling stops.
const stopPoolingAfter = 3

// noteStale records a pooled connection the server had closed.
func (t *transport) noteStale() {
	if t.stale.Add(1) >= stopPoolingAfter && t.reusedOK.Load() == 0 {
		t.noPool.Store(true)
		t.closeIdle()
	}
}

// conn is one connection and its read buffer.
type conn struct {
	nc net.Conn // rx, or a *tls.Conn over it
	rx *netstamp.Conn
	br *bufio.Reader // reads through head
	// head bounds what a response head may take (net/http's reader has no
	// limit: headers that never end grew to 962 MB).
	head headLimit
	hdr  []byte // request head, rebuilt per request
}

// maxResponseHead bounds a response's status line and headers.
const maxResponseHead = 64 << 10

// headLimit passes reads through, failing them once more than left bytes
// were read while armed (left >= 0); -1 disarms it for the body.
type headLimit struct {
	r    io.Reader
	left int64
}

var errHeadTooLarge = fmt.Errorf("response head exceeded %d bytes", maxResponseHead)

func (h *headLimit) Read(p []byte) (int, error) {
	if h.left < 0 {
		return h.r.Read(p)
	}
	if h.left == 0 {
		return 0, errHeadTooLarge
	}
	if int64(len(p)) > h.left {
		p = p[:h.left]
	}
	n, err := h.r.Read(p)
	h.left -= int64(n)
	return n, err
}

func newTransport(baseURL, path string, maxConns int, tlsConf *tls.Config, connectTimeout time.Duration) (*transport, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil {
		return nil, fmt.Errorf("client: base URL %q: %w", baseURL, err)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("client: base URL %q has no host", baseURL)
	}
	t := &transport{scheme: u.Scheme, host: u.Host, path: u.EscapedPath() + path, maxIdle: 4096,
		dialer: net.Dialer{Timeout: cmp.Or(connectTimeout, 30*time.Second), KeepAlive: 30 * time.Second, Control: netstamp.Control}}
	port := u.Port()
	switch u.Scheme {
	case "http":
		if port == "" {
			port = "80"
		}
	case "https":
		if port == "" {
			port = "443"
		}
		t.tls = &tls.Config{}
		if tlsConf != nil {
			t.tls = tlsConf.Clone()
		}
		if t.tls.ServerName == "" {
			t.tls.ServerName = u.Hostname()
		}
		t.tls.NextProtos = []string{"http/1.1"}
	default:
		return nil, fmt.Errorf("client: base URL %q: scheme must be http or https", baseURL)
	}
	t.addr = net.JoinHostPort(u.Hostname(), port)
	if maxConns > 0 {
		t.sem = make(chan struct{}, maxConns)
	}
	return t, nil
}

// response is an open response; Close returns its connection to the pool
// when the body was read to its end, and closes it otherwise.
type response struct {
	*http.Response
	t    *transport
	c    *conn
	body eofReader
	stop func() bool // unregisters the context's cancellation
}

// Arrived is when the bytes of the connection's latest read arrived.
func (r *response) Arrived() time.Time { return r.c.rx.Arrived() }

// FromKernel reports whether Arrived is the kernel's stamp.
func (r *response) FromKernel() bool { return r.c.rx.FromKernel() }

// Reads counts the connection's reads that returned data.
func (r *response) Reads() uint64 { return r.c.rx.Reads() }

func (r *response) Read(p []byte) (int, error) { return r.body.Read(p) }

func (r *response) Close() {
	reusable := r.stop() && r.body.eof && !r.Response.Close && r.c.br.Buffered() == 0
	r.t.release(r.c, reusable)
}

type eofReader struct {
	r   io.Reader
	eof bool
}

func (e *eofReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err == io.EOF {
		e.eof = true
	}
	return n, err
}

// roundTrip sends the request and reads the response head. The context
// bounds the whole exchange, body included, until Close.
func (t *transport) roundTrip(ctx context.Context, body []byte, headers []string) (*response, error) {
	if t.sem != nil {
		select {
		case t.sem <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	for attempt := 0; ; attempt++ {
		// A retry always dials: the pool's other connections may have
		// been closed by the same server just as well.
		c, reused, err := t.get(ctx, attempt > 0)
		if err != nil {
			t.release(nil, false)
			return nil, err
		}
		// A canceled context unblocks reads and writes through a deadline
		// in the past; no goroutine waits for it.
		stop := context.AfterFunc(ctx, func() { c.nc.SetDeadline(time.Unix(1, 0)) })
		resp, err := t.exchange(c, body, headers)
		if err == nil {
			if reused {
				t.reusedOK.Add(1)
			}
			r := &response{Response: resp, t: t, c: c, stop: stop}
			r.body.r = resp.Body
			return r, nil
		}
		stop()
		c.nc.Close()
		// A kept-alive connection that the server closed just as it was
		// reused fails before any byte of a response. The idle check in
		// get makes that rare; the request is then sent once more on a
		// fresh connection. A server that read it and closed without
		// answering gets it twice: for a benchmark a smaller harm than a
		// failed request at every keep-alive timeout (uvicorn's is 5 s).
		if !reused || attempt > 0 || ctx.Err() != nil || !staleConn(err) {
			t.release(nil, false)
			return nil, err
		}
		t.noteStale()
	}
}

func staleConn(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func (t *transport) exchange(c *conn, body []byte, headers []string) (*http.Response, error) {
	c.hdr = append(c.hdr[:0], "POST "...)
	c.hdr = append(c.hdr, t.path...)
	c.hdr = append(c.hdr, " HTTP/1.1\r\nHost: "...)
	c.hdr = append(c.hdr, t.host...)
	c.hdr = append(c.hdr, "\r\nUser-Agent: benchci\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nAccept-Encoding: identity\r\nContent-Length: "...)
	c.hdr = strconv.AppendInt(c.hdr, int64(len(body)), 10)
	c.hdr = append(c.hdr, "\r\n"...)
	for i := 0; i+1 < len(headers); i += 2 {
		c.hdr = append(c.hdr, headers[i]...)
		c.hdr = append(c.hdr, ": "...)
		c.hdr = append(c.hdr, headers[i+1]...)
		c.hdr = append(c.hdr, "\r\n"...)
	}
	c.hdr = append(c.hdr, "\r\n"...)
	bufs := net.Buffers{c.hdr, body}
	if _, err := bufs.WriteTo(c.nc); err != nil {
		return nil, err
	}
	// Armed for the head; the buffer may read some body bytes with it.
	c.head.left = maxResponseHead + int64(c.br.Size())
	defer func() { c.head.left = -1 }()
	for {
		resp, err := http.ReadResponse(c.br, nil)
		if err != nil {
			return nil, err
		}
		// 1xx responses (100 Continue, 103 Early Hints) precede the real one.
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			return resp, nil
		}
	}
}

// get returns an idle connection that is still open (reused), or dials
// one; fresh always dials.
func (t *transport) get(ctx context.Context, fresh bool) (c *conn, reused bool, err error) {
	for !fresh {
		t.mu.Lock()
		n := len(t.idle)
		if n == 0 {
			t.mu.Unlock()
			break
		}
		c = t.idle[n-1]
		t.idle[n-1] = nil
		t.idle = t.idle[:n-1]
		t.mu.Unlock()
		if c.rx.Idle(t.tls != nil) {
			return c, true, nil
		}
		c.nc.Close()
		t.noteStale()
	}
	nc, err := t.dialer.DialContext(ctx, "tcp", t.addr)
	if err != nil {
		return nil, false, err
	}
	rx := netstamp.Wrap(nc.(*net.TCPConn))
	c = &conn{nc: rx, rx: rx}
	if t.tls != nil {
		tc := tls.Client(rx, t.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			rx.Close()
			return nil, false, err
		}
		c.nc = tc
	}
	// Small: it holds the response head and chunk-size lines; stream data
	// is read through it into the event reader's buffer.
	c.head = headLimit{r: c.nc, left: -1}
	c.br = bufio.NewReaderSize(&c.head, 2<<10)
	return c, false, nil
}

// release returns c to the pool if reusable, else closes it, and frees its
// place under the connection bound.
func (t *transport) release(c *conn, reusable bool) {
	if t.sem != nil {
		<-t.sem
	}
	if c == nil {
		return
	}
	if reusable && !t.noPool.Load() {
		t.mu.Lock()
		if len(t.idle) < t.maxIdle {
			t.idle = append(t.idle, c)
			t.mu.Unlock()
			return
		}
		t.mu.Unlock()
	}
	c.nc.Close()
}

// closeIdle closes the pooled connections.
func (t *transport) closeIdle() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, c := range idle {
		c.nc.Close()
	}
}

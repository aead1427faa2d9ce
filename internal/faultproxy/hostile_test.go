package faultproxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestBodyIsStreamed (issue 26, F15): a request body goes upstream as it
// comes, not once whole. The client sends the body's first half and waits
// for the upstream to have read it before sending the rest: a proxy that
// holds the body never forwards it, and the wait runs out.
func TestBodyIsStreamed(t *testing.T) {
	got := make(chan string, 1)
	whole := make(chan string, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		head := make([]byte, 5)
		if _, err := io.ReadFull(r.Body, head); err != nil {
			t.Errorf("upstream: %v", err)
			return
		}
		got <- string(head)
		rest, _ := io.ReadAll(r.Body)
		whole <- string(head) + string(rest)
		io.WriteString(w, "data: {}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(up.Close)
	_, u := proxyTo(t, up.URL, Faults{})
	pr, pw := io.Pipe()
	req, _ := http.NewRequest(http.MethodPost, u+"/v1/completions", pr)
	req.ContentLength = 10
	type answer struct {
		resp *http.Response
		err  error
	}
	answers := make(chan answer, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		answers <- answer{resp, err}
	}()
	io.WriteString(pw, "hello")
	select {
	case head := <-got:
		if head != "hello" {
			t.Errorf("upstream read %q first, want hello", head)
		}
	case <-time.After(20 * time.Second):
		t.Error("the upstream saw nothing of the body while the client held its second half: the proxy holds bodies")
	}
	io.WriteString(pw, "world")
	pw.Close()
	a := <-answers
	if a.err != nil {
		t.Fatal(a.err)
	}
	body, _ := io.ReadAll(a.resp.Body)
	a.resp.Body.Close()
	if a.resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "[DONE]") {
		t.Errorf("%d %q", a.resp.StatusCode, body)
	}
	if w := <-whole; w != "helloworld" {
		t.Errorf("upstream got %q", w)
	}
}

// zeros reads n zero bytes without allocating them.
type zeros struct{ n int64 }

func (z *zeros) Read(b []byte) (int, error) {
	if z.n <= 0 {
		return 0, io.EOF
	}
	k := min(int64(len(b)), z.n)
	clear(b[:k])
	z.n -= k
	return int(k), nil
}

// TestBodyNotHeld (F15): a 48 MB body through the proxy costs the
// process a few buffers, not the body: under 4 MB allocated in all, the
// client and the upstream (which read and write through fixed buffers)
// included. Allocation is counted, not timed or sampled from the OS.
func TestBodyNotHeld(t *testing.T) {
	const size = 48 << 20
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.CopyBuffer(io.Discard, r.Body, make([]byte, 32<<10))
		fmt.Fprintf(w, "%d", n)
	}))
	t.Cleanup(up.Close)
	_, u := proxyTo(t, up.URL, Faults{})
	send := func() string {
		req, _ := http.NewRequest(http.MethodPost, u+"/v1/completions", &zeros{size})
		req.ContentLength = size
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return fmt.Sprint(resp.StatusCode, " ", string(b))
	}
	send() // warm the connections and pools
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got := send()
	runtime.ReadMemStats(&after)
	if want := fmt.Sprint(200, " ", size); got != want {
		t.Fatalf("answer %q, want %q", got, want)
	}
	t.Logf("%.2f MB allocated", float64(after.TotalAlloc-before.TotalAlloc)/(1<<20))
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("a %d MB body allocated %.1f MB passing through", size>>20, float64(alloc)/(1<<20))
	}
}

// rawPost sends a POST with the given headers on a raw connection, writes
// body, and reads the answer's status and body. A connection closed
// without an answer is an error.
func rawPost(t *testing.T, proxy, headers string, body io.Reader) (int, string, error) {
	t.Helper()
	addr := strings.TrimPrefix(proxy, "http://")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	fmt.Fprintf(c, "POST /v1/completions HTTP/1.1\r\nHost: %s\r\n%s\r\n", addr, headers)
	if body != nil {
		go func() {
			io.Copy(c, body)
			if cl, ok := body.(io.Closer); ok {
				cl.Close() // its writer stops too
			}
		}()
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, "", err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(b), nil
}

// TestBodyLimit (F15): a body above 64 MiB is refused with 413, at once
// when its length is declared (the upstream never asked), and when it is
// streamed in chunks, as soon as it passes the limit; one at the limit
// passes whole.
func TestBodyLimit(t *testing.T) {
	var calls atomic.Int64
	got := make(chan int64, 4)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		n, _ := io.CopyBuffer(io.Discard, r.Body, make([]byte, 32<<10))
		got <- n
		fmt.Fprintf(w, "%d", n)
	}))
	t.Cleanup(up.Close)
	_, u := proxyTo(t, up.URL, Faults{})

	status, body, err := rawPost(t, u, fmt.Sprintf("Content-Length: %d\r\n", maxBody+1), nil)
	if err != nil || status != http.StatusRequestEntityTooLarge || !strings.Contains(body, "64 MiB") {
		t.Errorf("declared %d bytes: %d %q %v, want 413", maxBody+1, status, body, err)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the upstream was asked %d times for a body declared too large", n)
	}

	status, body, err = rawPost(t, u, "Transfer-Encoding: chunked\r\n", chunked(maxBody+1))
	if err != nil || status != http.StatusRequestEntityTooLarge || !strings.Contains(body, "64 MiB") {
		t.Errorf("%d bytes in chunks: %d %q %v, want 413", maxBody+1, status, body, err)
	}

	status, body, err = rawPost(t, u, "Transfer-Encoding: chunked\r\n", chunked(maxBody))
	if err != nil || status != http.StatusOK || body != fmt.Sprint(maxBody) {
		t.Errorf("%d bytes in chunks: %d %q %v, want 200 and all of it upstream", maxBody, status, body, err)
	}
}

// chunked is n zero bytes in the chunked transfer coding.
func chunked(n int64) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		buf := make([]byte, 1<<20)
		for n > 0 {
			k := min(n, int64(len(buf)))
			if _, err := fmt.Fprintf(pw, "%x\r\n", k); err != nil {
				return
			}
			if _, err := pw.Write(buf[:k]); err != nil {
				return
			}
			io.WriteString(pw, "\r\n")
			n -= k
		}
		io.WriteString(pw, "0\r\n\r\n")
		pw.Close()
	}()
	return pr
}

// TestMalformedUpstreamReply (issue 26): whatever the upstream answers,
// a client that got nothing of it gets 502 Bad Gateway and a reason,
// never a connection closed without an answer.
func TestMalformedUpstreamReply(t *testing.T) {
	for _, reply := range []string{
		"HELLO\r\n\r\n",
		"HTTP/1.1 000 Zero\r\nContent-Length: 0\r\n\r\n", // read as status 0, which panics a handler writing it
		"HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n",
		"",
	} {
		ln := rawUpstream(t, func() string { return reply })
		_, u := proxyTo(t, "http://"+ln.Addr().String(), Faults{})
		for _, method := range []string{http.MethodPost, http.MethodGet} {
			req, _ := http.NewRequest(method, u+"/v1/completions", strings.NewReader("{}"))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Errorf("%s, upstream replying %q: %v, want 502", method, reply, err)
				continue
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(body), "upstream") {
				t.Errorf("%s, upstream replying %q: %d %q, want 502 and why", method, reply, resp.StatusCode, body)
			}
		}
		ln.Close()
	}
}

// TestUpstreamCutMidReply: an answer the upstream cuts after its first
// bytes reaches the client cut too (its head is gone), never as a whole
// answer.
func TestUpstreamCutMidReply(t *testing.T) {
	ln := rawUpstream(t, func() string { return "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort" })
	t.Cleanup(func() { ln.Close() })
	_, u := proxyTo(t, "http://"+ln.Addr().String(), Faults{})
	resp, err := http.Post(u+"/v1/completions", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "short" || err == nil {
		t.Errorf("%d %q %v, want 200, short and the cut", resp.StatusCode, body, err)
	}
}

// rawUpstream is an upstream that answers every request (its body read
// whole) with the bytes reply returns, then closes the connection: for
// replies no HTTP server would write.
func rawUpstream(tb testing.TB, reply func() string) net.Listener {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if req, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
					io.Copy(io.Discard, req.Body)
					io.WriteString(c, reply())
				}
			}()
		}
	}()
	return ln
}

func proxyTo(t *testing.T, upstream string, f Faults) (*Proxy, string) {
	t.Helper()
	p, err := New(upstream, f)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	u, err := p.Listen(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return p, u
}

// FuzzUpstreamReply: whatever bytes the upstream answers, the client gets
// an answer's head: the upstream's, or the proxy's 502 with its reason.
func FuzzUpstreamReply(f *testing.F) {
	for _, seed := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\n",
		"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n",
		"HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n",
		"HTTP/1.0 200 OK\r\n\r\n",
		"HTTP/1.1 999 What\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nok",
		"\x00\xff",
	} {
		f.Add(seed)
	}
	var mu sync.Mutex
	var reply atomic.Value
	reply.Store("")
	ln := rawUpstream(f, func() string { return reply.Load().(string) })
	f.Cleanup(func() { ln.Close() })
	p, err := New("http://"+ln.Addr().String(), Faults{})
	if err != nil {
		f.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.Cleanup(cancel)
	u, err := p.Listen(ctx, "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	cl := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	f.Fuzz(func(t *testing.T, r string) {
		mu.Lock()
		defer mu.Unlock()
		reply.Store(r)
		resp, err := cl.Post(u+"/v1/completions", "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatalf("upstream replying %q: %v", r, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusBadGateway && !strings.Contains(string(body), "fault_proxy") && !strings.HasPrefix(r, "HTTP/1.1 502") {
			t.Errorf("upstream replying %q: 502 without a reason: %q", r, body)
		}
	})
}

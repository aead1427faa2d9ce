package client

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchci/benchci/internal/netstamp"
)

// okStream answers every request with a two-chunk chat stream.
func okStream(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	io.WriteString(w, chatChunk("a")+chatChunk("b")+done)
}

func mustDo(t *testing.T, c *Client, id string) *Result {
	t.Helper()
	var res Result
	c.Do(context.Background(), []byte(`{}`), id, &res)
	if !res.OK() || len(res.ChunkAt) != 2 {
		t.Fatalf("request %s: %s %s, %d chunks", id, res.Err, res.Detail, len(res.ChunkAt))
	}
	return &res
}

func TestTransportReusesConnections(t *testing.T) {
	t.Parallel()
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(okStream))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c := newTestClient(t, srv.URL, "chat")
	for i := range 20 {
		mustDo(t, c, fmt.Sprint(i))
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("20 sequential requests opened %d connections, want 1", n)
	}
}

// rawServer accepts connections and hands each to serve.
func rawServer(t testing.TB, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return "http://" + ln.Addr().String()
}

// answering serves respond on every connection once its request has been
// read, then closes the connection.
func answering(t testing.TB, respond func(net.Conn)) string {
	t.Helper()
	return rawServer(t, func(c net.Conn) {
		defer c.Close()
		if _, err := readRequest(bufio.NewReader(c)); err != nil {
			return
		}
		respond(c)
	})
}

// readRequest reads one request head and its body.
func readRequest(br *bufio.Reader) (*http.Request, error) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil, err
	}
	_, err = io.Copy(io.Discard, req.Body)
	return req, err
}

const chunkedOK = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"

func chunked(s string) string { return fmt.Sprintf("%x\r\n%s\r\n", len(s), s) }

// okChunked is a whole two-chunk stream, chunked.
var okChunked = chunkedOK + chunked(chatChunk("a")+chatChunk("b")+done) + "0\r\n\r\n"

// A server that closes kept-alive connections once idle (uvicorn does
// after 5 s) must not cost a failed request, nor get one twice.
func TestTransportStaleConnection(t *testing.T) {
	t.Parallel()
	var requests atomic.Int32
	closed := make(chan struct{}, 3)
	url := rawServer(t, func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		if _, err := readRequest(br); err != nil {
			return
		}
		requests.Add(1)
		io.WriteString(c, okChunked)
		// Then close the connection the client keeps idle, and say so.
		c.Close()
		closed <- struct{}{}
	})
	c := newTestClient(t, url, "chat")
	for i := range 3 {
		mustDo(t, c, fmt.Sprint(i))
		<-closed // the next request finds its pooled connection closed
	}
	if n := requests.Load(); n != 3 {
		t.Errorf("server saw %d requests for 3, want 3", n)
	}
}

// A request the server never answers on a reused connection, closed at
// once, is sent again on a new connection: only when nothing came back.
func TestTransportRetriesOnceOnStaleConnection(t *testing.T) {
	t.Parallel()
	var conns atomic.Int32
	url := rawServer(t, func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		first := conns.Add(1) == 1
		for n := 0; ; n++ {
			if _, err := readRequest(br); err != nil {
				return
			}
			if first && n == 1 {
				return // closes without an answer, as a server timing out the idle connection would
			}
			io.WriteString(c, okChunked)
		}
	})
	c := newTestClient(t, url, "chat")
	mustDo(t, c, "1")
	mustDo(t, c, "2")
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2 (the retry's)", n)
	}
}

// A response delimited by the connection's end (no length, no chunking)
// streams, and its connection is not reused.
func TestTransportCloseDelimited(t *testing.T) {
	t.Parallel()
	var conns atomic.Int32
	// Each chunk after the first is written 5 ms after the client counted
	// the one before, so none shares a read with it (5 ms apart by the
	// clock alone, a loaded machine read two at once and stamped them
	// alike).
	counted := make(chan struct{}, 16)
	url := rawServer(t, func(c net.Conn) {
		defer c.Close()
		conns.Add(1)
		if _, err := readRequest(bufio.NewReader(c)); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\n")
		for i, s := range []string{chatChunk("a"), chatChunk("b"), done} {
			if i > 0 {
				select {
				case <-counted:
				case <-time.After(5 * time.Second):
				}
				time.Sleep(5 * time.Millisecond)
			}
			io.WriteString(c, s)
		}
	})
	c := newTestClient(t, url, "chat")
	c.opts.Counter = CounterFunc(func(s string) int {
		if s != "" {
			select {
			case counted <- struct{}{}:
			default:
			}
		}
		return Words.Count(s)
	})
	r1 := mustDo(t, c, "1")
	mustDo(t, c, "2")
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections for 2 close-delimited responses, want 2", n)
	}
	if gap := r1.ChunkAt[1] - r1.ChunkAt[0]; gap < 5*time.Millisecond {
		t.Errorf("a chunk written 5ms after the one before was read measured %v after it", gap)
	}
}

func TestTransportMaxConns(t *testing.T) {
	t.Parallel()
	var cur, peak atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := cur.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(30 * time.Millisecond)
		cur.Add(-1)
		okStream(w, r)
	}))
	defer srv.Close()
	c, err := New(Options{BaseURL: srv.URL, API: "chat", Timeout: 5 * time.Second, MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdle()
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() { mustDo(t, c, fmt.Sprint(i)) })
	}
	wg.Wait()
	if p := peak.Load(); p != 2 {
		t.Errorf("peak %d requests in flight with MaxConns 2", p)
	}
}

func TestTransportTLS(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 1 {
			http.Error(w, "want HTTP/1.1, got "+r.Proto, http.StatusBadRequest)
			return
		}
		okStream(w, r)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	c, err := New(Options{BaseURL: srv.URL, API: "chat", Timeout: 5 * time.Second, TLS: &tls.Config{RootCAs: roots}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdle()
	mustDo(t, c, "1")
	mustDo(t, c, "2")

	untrusted, _ := New(Options{BaseURL: srv.URL, API: "chat", Timeout: 5 * time.Second})
	var res Result
	untrusted.Do(context.Background(), []byte(`{}`), "3", &res)
	if res.Err != ErrConnect || !strings.Contains(res.Detail, "certificate") {
		t.Errorf("untrusted certificate: %s %q, want a connect error", res.Err, res.Detail)
	}
}

func TestTransportPathAndHeaders(t *testing.T) {
	t.Parallel()
	got := make(chan *http.Request, 1)
	url := rawServer(t, func(c net.Conn) {
		defer c.Close()
		req, err := readRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		got <- req
		io.WriteString(c, okChunked)
	})
	c, err := New(Options{BaseURL: url + "/proxy/", API: "completions", APIKey: "k", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdle()
	var res Result
	c.Do(context.Background(), []byte(`{"a":1}`), "id-1", &res)
	req := <-got
	if req.Method != "POST" || req.URL.Path != "/proxy/v1/completions" || req.ContentLength != 7 ||
		req.Header.Get("X-Request-Id") != "id-1" || req.Header.Get("Authorization") != "Bearer k" ||
		req.Header.Get("Content-Type") != "application/json" || req.Host != strings.TrimPrefix(url, "http://") {
		t.Errorf("request %s %s length %d host %s headers %v", req.Method, req.URL, req.ContentLength, req.Host, req.Header)
	}

	c.Do(context.Background(), []byte(`{}`), "bad\r\nX-Injected: 1", &res)
	if res.Err != ErrConnect {
		t.Errorf("id with a line break: %s, want a connect error and nothing sent", res.Err)
	}
	if _, err := New(Options{BaseURL: url, API: "chat", APIKey: "k\r\nX: 1"}); err == nil {
		t.Error("API key with a line break accepted")
	}
	for _, bad := range []string{"ftp://127.0.0.1", "127.0.0.1:8000", "http://"} {
		if _, err := New(Options{BaseURL: bad, API: "chat"}); err == nil {
			t.Errorf("base URL %q accepted", bad)
		}
	}
}

// Bytes that wait in the socket keep the time they arrived: a client busy
// elsewhere does not add its delay to the server's latency.
func TestChunkTimesAreArrivalTimes(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("arrival stamps come from Linux")
	}
	if !netstamp.Ready(2 * time.Second) {
		t.Fatal("the kernel gave no receive stamps in 2s")
	}
	// On loopback the kernel stamps bytes inside the sender's write, so
	// the true gap between the two arrivals lies between the time from the
	// end of the first write to the start of the second and the time from
	// the start of the first to the end of the second, however the
	// scheduler treats this goroutine.
	type bounds struct{ lo, hi time.Duration }
	written := make(chan bounds, 1)
	url := answering(t, func(c net.Conn) {
		io.WriteString(c, chunkedOK)
		start1 := time.Now()
		io.WriteString(c, chunked(chatChunk("a")))
		end1 := time.Now()
		time.Sleep(20 * time.Millisecond)
		start2 := time.Now()
		io.WriteString(c, chunked(chatChunk("b")+done)+"0\r\n\r\n")
		end2 := time.Now()
		written <- bounds{lo: start2.Sub(end1), hi: end2.Sub(start1)}
	})
	c := newTestClient(t, url, "chat")
	// The client reads the second chunk only once a slow counter has
	// held it up for stall: the time recorded must be when it came.
	const stall = 50 * time.Millisecond
	slow := true
	c.opts.Counter = CounterFunc(func(s string) int {
		if slow {
			slow = false
			time.Sleep(stall)
		}
		return 1
	})
	res := mustDo(t, c, "1")
	// Read times would put the stall into the gap. The kernel stamps
	// loopback bytes in its receive path, which the sender's write
	// normally runs itself, but a loaded machine can defer it to
	// ksoftirqd: one CI run beside two CPU hogs stamped a chunk 1.1 ms
	// after its write returned. So the gap may stray from the writes'
	// bounds by up to half the way to the stall, where it is still nearer
	// the arrivals than the reads.
	w := <-written
	slack := (stall - w.hi) / 2
	if slack < time.Millisecond {
		t.Skipf("the server's 20 ms pause took %v, too near the %v stall to tell arrival times from read times", w.hi, stall)
	}
	if gap := res.ChunkAt[1] - res.ChunkAt[0]; gap < w.lo-slack || gap > w.hi+slack {
		t.Errorf("chunks written between %v and %v apart measured %v apart: read times, not arrival times", w.lo, w.hi, gap)
	}
}

// Chunks that waited in the socket while the client was busy come in one
// read and share its stamp: the gaps into them were not measured, and the
// result says so, chunk by chunk.
func TestCoalescedChunksAreMarked(t *testing.T) {
	t.Parallel()
	readA, wroteBCD, readD := make(chan struct{}), make(chan struct{}), make(chan struct{})
	url := answering(t, func(c net.Conn) {
		io.WriteString(c, chunkedOK)
		io.WriteString(c, chunked(chatChunk("a")))
		<-readA
		for _, s := range []string{"b", "c", "d"} { // three writes, three packets
			time.Sleep(2 * time.Millisecond)
			io.WriteString(c, chunked(chatChunk(s)))
		}
		close(wroteBCD)
		<-readD
		io.WriteString(c, chunked(chatChunk("e")+done)+"0\r\n\r\n")
	})
	c := newTestClient(t, url, "chat")
	// Each step waits for the other side, so the reads are the same on a
	// loaded machine: "a" is taken alone, then the client is held until
	// b, c and d wait in its socket, and "e" is written once it took d.
	c.opts.Counter = CounterFunc(func(s string) int {
		switch s {
		case "a":
			close(readA)
			<-wroteBCD
		case "d":
			close(readD)
		}
		return 1
	})
	var res Result
	c.Do(context.Background(), []byte(`{}`), "1", &res)
	if !res.OK() || len(res.ChunkRead) != 5 {
		t.Fatalf("%s %s: %d chunks with read numbers, want 5: %v", res.Err, res.Detail, len(res.ChunkRead), res.ChunkRead)
	}
	r := res.ChunkRead
	if r[0] == r[1] || r[1] != r[2] || r[2] != r[3] || r[3] == r[4] {
		t.Errorf("read numbers %v: want b, c, d in one read, a and e alone", r)
	}
	for i, want := range []bool{false, false, false, true} {
		if got := res.MeasuredGap(i + 1); got != want {
			t.Errorf("gap before chunk %d: measured %v, want %v", i+1, got, want)
		}
	}
}

// A server that writes a burst of chunks at once (one write, one packet)
// delivers them in one read: the gaps into the burst are each an equal
// share of the time since the chunk before, so no gap is lost and none is
// an invented zero; the gap after the burst is measured.
func TestBurstGapsAreSpread(t *testing.T) {
	t.Parallel()
	readA, readD := make(chan struct{}), make(chan struct{})
	url := answering(t, func(c net.Conn) {
		io.WriteString(c, chunkedOK)
		io.WriteString(c, chunked(chatChunk("a")))
		<-readA
		io.WriteString(c, chunked(chatChunk("b")+chatChunk("c")+chatChunk("d"))) // one write
		<-readD
		io.WriteString(c, chunked(chatChunk("e")+done)+"0\r\n\r\n")
	})
	c := newTestClient(t, url, "chat")
	// Each write waits for the client to have taken the chunk before, so
	// the reads are the same on a loaded machine.
	c.opts.Counter = CounterFunc(func(s string) int {
		switch s {
		case "a":
			close(readA)
		case "d":
			close(readD)
		}
		return 1
	})
	var res Result
	c.Do(context.Background(), []byte(`{}`), "1", &res)
	if !res.OK() || len(res.ChunkAt) != 5 {
		t.Fatalf("%s %s: %d chunks, want 5", res.Err, res.Detail, len(res.ChunkAt))
	}
	type gap struct {
		d      time.Duration
		spread bool
	}
	var got []gap
	untimed := res.ChunkGaps(func(d time.Duration, spread bool) { got = append(got, gap{d, spread}) })
	at := res.ChunkAt
	share := (at[3] - at[0]) / 3
	want := []gap{{share, true}, {share, true}, {share, true}, {at[4] - at[3], false}}
	if untimed != 0 || !slices.Equal(got, want) {
		t.Errorf("gaps %v (%d untimed) from chunks at %v read %v; want %v: the burst's span over its three gaps, then the gap after it", got, untimed, at, res.ChunkRead, want)
	}
	if at[1] != at[3] {
		t.Errorf("chunks b-d stamped %v: want one read's stamp", at[1:4])
	}
}

// A user who stops reading closes the stream after the tokens the
// workload drew: its own kind, with what came until then.
func TestAbandonAfterTokens(t *testing.T) {
	t.Parallel()
	url := answering(t, func(c net.Conn) {
		io.WriteString(c, chunkedOK)
		for _, s := range []string{"a", "b", "c", "d", "e"} {
			if _, err := io.WriteString(c, chunked(chatChunk(s))); err != nil {
				return
			}
		}
		io.WriteString(c, chunked(done)+"0\r\n\r\n")
	})
	c := newTestClient(t, url, "chat")
	var res Result
	c.Do(AbandonAfter(context.Background(), 3), []byte(`{}`), "1", &res)
	if res.Err != ErrAbandoned || len(res.ChunkAt) != 3 || res.OutputTokens != 3 || res.FirstToken == 0 {
		t.Errorf("%s %q: %d chunks, %d tokens; want abandoned after 3", res.Err, res.Detail, len(res.ChunkAt), res.OutputTokens)
	}
	res = Result{}
	c.Do(context.Background(), []byte(`{}`), "2", &res)
	if !res.OK() || len(res.ChunkAt) != 5 {
		t.Errorf("without abandoning: %s, %d chunks", res.Err, len(res.ChunkAt))
	}
}

// Redirects are not followed: the hop would be timed as the server's.
func TestTransportRedirectIsAnError(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:1/v1/chat/completions", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL, "chat")
	var res Result
	c.Do(context.Background(), []byte(`{}`), "1", &res)
	if res.Err != ErrHTTP || res.Status != 307 || !strings.Contains(res.Detail, "redirected to http://127.0.0.1:1/") {
		t.Errorf("redirect: %s %d %q", res.Err, res.Status, res.Detail)
	}
}

// llama.cpp's server answers "Connection: keep-alive" and then closes the
// connection after every streamed response. At concurrency 8 no request
// may fail for it: a retry dials instead of taking another pooled
// connection the server has closed too, and after a few such connections
// the client stops pooling for this server and says so.
func TestTransportServerClosesAfterEveryResponse(t *testing.T) {
	t.Parallel()
	var conns atomic.Int32
	url := rawServer(t, func(c net.Conn) {
		defer c.Close()
		conns.Add(1)
		if _, err := readRequest(bufio.NewReader(c)); err != nil {
			return
		}
		io.WriteString(c, strings.Replace(okChunked, "\r\n\r\n", "\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n", 1))
		// The close comes a moment later, as the server tears the slot
		// down: long enough for the client to have reused the connection.
		time.Sleep(3 * time.Millisecond)
	})
	c := newTestClient(t, url, "chat")
	var wg sync.WaitGroup
	var failed atomic.Int32
	for w := range 8 {
		wg.Go(func() {
			for i := range 50 {
				var res Result
				c.Do(context.Background(), []byte(`{}`), fmt.Sprint(w, ".", i), &res)
				if !res.OK() {
					failed.Add(1)
					t.Errorf("request %d.%d: %s %s", w, i, res.Err, res.Detail)
				}
			}
		})
	}
	wg.Wait()
	if failed.Load() != 0 {
		t.Fatalf("%d of 400 requests failed", failed.Load())
	}
	if !c.ClosesAfterResponse() {
		t.Error("the client did not learn that the server closes after every response")
	}
	if n := conns.Load(); n > 400+stopPoolingAfter*8 {
		t.Errorf("%d connections for 400 requests: requests were sent more than once", n)
	}
}

// Headers that never end are cut at the head bound, and a stream of tiny
// chunks at the chunk bound: what one stream keeps stays bounded.
func TestTransportBoundsWhatAStreamKeeps(t *testing.T) {
	t.Parallel()
	url := answering(t, func(c net.Conn) {
		io.WriteString(c, "HTTP/1.1 200 OK\r\n")
		line := "X-Pad: " + strings.Repeat("a", 1000) + "\r\n"
		for range 10000 { // 10 MB of headers, unless the client stops reading
			if _, err := io.WriteString(c, line); err != nil {
				return
			}
		}
	})
	var res Result
	newTestClient(t, url, "chat").Do(context.Background(), []byte(`{}`), "1", &res)
	if res.Err != ErrMalformed || !strings.Contains(res.Detail, "response head exceeded") {
		t.Errorf("endless headers: %s %q", res.Err, res.Detail)
	}

	tiny := answering(t, func(c net.Conn) {
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n")
		for range 1000 {
			if _, err := io.WriteString(c, chatChunk("x")); err != nil {
				return
			}
		}
	})
	c, err := New(Options{BaseURL: tiny, API: "chat", Model: "m", Timeout: 5 * time.Second, MaxChunks: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdle()
	res = Result{}
	c.Do(context.Background(), []byte(`{}`), "2", &res)
	if res.Err != ErrStreamLimit || len(res.ChunkAt) != 100 {
		t.Errorf("tiny chunks: %s %q, %d chunks kept", res.Err, res.Detail, len(res.ChunkAt))
	}
}

// BenchmarkHostileStream measures what one request to a hostile server
// costs the client at its default bounds (B/op is the memory per stream):
// headers that never end, and a stream of tiny chunks that never ends.
// Unbounded, the first grew to 962 MB and the second to 323 MB a stream.
func BenchmarkHostileStream(b *testing.B) {
	cases := []struct {
		name    string
		respond func(net.Conn)
		want    ErrorKind
	}{
		{"endless-headers", func(c net.Conn) {
			io.WriteString(c, "HTTP/1.1 200 OK\r\n")
			line := []byte("X-Pad: " + strings.Repeat("a", 1000) + "\r\n") // converted once: B/op is the client's
			for {
				if _, err := c.Write(line); err != nil {
					return
				}
			}
		}, ErrMalformed},
		{"endless-tiny-chunks", func(c net.Conn) {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n")
			chunk := []byte(strings.Repeat(chatChunk("x"), 64))
			for {
				if _, err := c.Write(chunk); err != nil {
					return
				}
			}
		}, ErrStreamLimit},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			c, err := New(Options{BaseURL: answering(b, tc.respond), API: "chat", Model: "m", Timeout: time.Minute})
			if err != nil {
				b.Fatal(err)
			}
			defer c.CloseIdle()
			b.ReportAllocs()
			var res Result
			for b.Loop() {
				res = Result{} // a fresh result a request: its buffers count
				c.Do(context.Background(), []byte(`{}`), "1", &res)
				if res.Err != tc.want {
					b.Fatalf("%s %q, want %s", res.Err, res.Detail, tc.want)
				}
			}
		})
	}
}

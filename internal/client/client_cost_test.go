package client

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// cannedServer answers every request on a kept-alive connection with the
// same chunked SSE stream of n content chunks, one HTTP chunk per event as
// engines send them. The server itself allocates nothing per request
// (fixed buffers, one prebuilt answer), so that the allocations counted
// while a request runs are the client's.
func cannedServer(tb testing.TB, n int) string {
	tb.Helper()
	var sb strings.Builder
	sb.WriteString(chunkedOK)
	for range n {
		sb.WriteString(chunked(chatChunk("tok ")))
	}
	sb.WriteString(chunked(`data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":` + fmt.Sprint(n) + "}}\n\n"))
	sb.WriteString(chunked(done))
	sb.WriteString("0\r\n\r\n")
	answer := []byte(sb.String())
	return rawServer(tb, func(c net.Conn) {
		defer c.Close()
		buf := make([]byte, 64<<10)
		have := 0
		for {
			// A request is its head and the two-byte body `{}`.
			for {
				if i := bytes.Index(buf[:have], []byte("\r\n\r\n")); i >= 0 && have >= i+4+2 {
					have = copy(buf, buf[i+6:have])
					break
				}
				m, err := c.Read(buf[have:])
				if err != nil {
					return
				}
				have += m
			}
			if _, err := c.Write(answer); err != nil {
				return
			}
		}
	})
}

// streamCost returns the allocations of one request of n chunks, measured
// over many requests on one kept-alive connection with one reused Result,
// as the load generator reuses them.
func streamCost(tb testing.TB, n int) float64 {
	c, err := New(Options{BaseURL: cannedServer(tb, n), API: Chat, Model: "m", Timeout: time.Minute})
	if err != nil {
		tb.Fatal(err)
	}
	defer c.CloseIdle()
	var res Result
	body := []byte(`{}`)
	ctx := context.Background()
	do := func() {
		c.Do(ctx, body, "1", &res)
		if !res.OK() || len(res.ChunkAt) != n {
			tb.Fatalf("%s %q, %d chunks, want %d", res.Err, res.Detail, len(res.ChunkAt), n)
		}
	}
	do() // dials, and grows the result's buffers
	return testing.AllocsPerRun(200, do)
}

// The client's per-request cost is guarded by what it allocates, which
// is deterministic where its time is not (a loaded machine's timings
// vary by more than any regression worth catching). Measured at the time
// of writing (Go 1.26, linux/amd64): 56 allocations a request of 8
// chunks and 112 of 64, so 48 a request and 1 a chunk (the chunk's text
// as a string, parseChunk's one); the rest of the per-chunk path (SSE
// framing, timing, counting) allocates nothing, and the fixed cost is the
// response head, the request's context and timer, and the connection's
// bookkeeping.
func TestStreamRequestAllocs(t *testing.T) {
	const (
		perRequest = 120 // today 112, at 64 chunks
		perChunk   = 1.1 // today 1: one more allocation in 10 chunks fails
	)
	few, many := streamCost(t, 8), streamCost(t, 64)
	t.Logf("allocations a request: %.0f with 8 chunks, %.0f with 64", few, many)
	if many > perRequest {
		t.Errorf("a request of 64 chunks allocates %.0f times, want at most %d", many, perRequest)
	}
	if per := (many - few) / (64 - 8); per > perChunk {
		t.Errorf("%.2f allocations a chunk (%.0f for 8 chunks, %.0f for 64), want at most %.2f", per, few, many, perChunk)
	}
}

// BenchmarkStreamRequest measures one whole streamed request of 64
// content chunks on a kept-alive loopback connection: send, response
// head, SSE framing, parsing and timing every chunk, and the end.
func BenchmarkStreamRequest(b *testing.B) {
	const n = 64
	c, err := New(Options{BaseURL: cannedServer(b, n), API: Chat, Model: "m", Timeout: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	defer c.CloseIdle()
	var res Result
	body := []byte(`{}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		c.Do(ctx, body, "1", &res)
		if !res.OK() || len(res.ChunkAt) != n {
			b.Fatalf("%s %q, %d chunks", res.Err, res.Detail, len(res.ChunkAt))
		}
	}
}

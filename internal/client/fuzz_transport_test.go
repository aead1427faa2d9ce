package client

import (
	"bufio"
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// FuzzResponse serves arbitrary bytes as the response to a request and
// checks that the client returns a consistent measurement, whatever came:
// no panic, no hang, chunk times in order.
func FuzzResponse(f *testing.F) {
	stream := chatChunk("a") + chatChunk("b") + done
	f.Add([]byte(chunkedOK + chunked(stream) + "0\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 100 Continue\r\n\r\n" + chunkedOK + chunked(stream) + "0\r\n\r\n"))
	f.Add([]byte("HTTP/1.0 200 OK\r\n\r\n" + stream))
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 9999\r\n\r\n" + stream))
	f.Add([]byte("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy"))
	f.Add([]byte(chunkedOK + "zz\r\n" + stream))
	f.Add([]byte("garbage\r\n\r\n"))
	var payload atomic.Value
	url := rawServer(f, func(c net.Conn) {
		defer c.Close()
		if _, err := readRequest(bufio.NewReader(c)); err != nil {
			return
		}
		c.Write(payload.Load().([]byte))
	})
	c, err := New(Options{BaseURL: url, API: "chat", Timeout: 2 * time.Second, MaxLine: 1 << 10, MaxStream: 1 << 16})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, resp []byte) {
		payload.Store(resp)
		var res Result
		c.Do(context.Background(), []byte(`{}`), "1", &res)
		if res.Err == ErrTimeout {
			t.Fatalf("a response followed by the server closing timed out: %s", res.Detail)
		}
		if len(res.ChunkAt) != len(res.ChunkTokens) {
			t.Fatalf("%d chunk times, %d token counts", len(res.ChunkAt), len(res.ChunkTokens))
		}
		for i := 1; i < len(res.ChunkAt); i++ {
			if res.ChunkAt[i] < res.ChunkAt[i-1] {
				t.Fatalf("chunk %d at %v before chunk %d at %v", i, res.ChunkAt[i], i-1, res.ChunkAt[i-1])
			}
		}
		if res.OK() && (res.FirstToken <= 0 || res.FirstToken > res.End || res.OutputTokens < 1) {
			t.Fatalf("success with first token %v, end %v, %d tokens", res.FirstToken, res.End, res.OutputTokens)
		}
	})
}

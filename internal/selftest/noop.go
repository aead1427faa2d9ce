package selftest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/textproto"
	"strconv"
	"strings"
	"time"
)

// noopBody is a finished completion stream of four tokens with usage, as
// the simulator would send it, answered at once.
const noopBody = `data: {"id":"cmpl-1","object":"text_completion","model":"m","choices":[{"index":0,"text":"word ","finish_reason":null}]}

data: {"id":"cmpl-1","object":"text_completion","model":"m","choices":[{"index":0,"text":"word ","finish_reason":null}]}

data: {"id":"cmpl-1","object":"text_completion","model":"m","choices":[{"index":0,"text":"word ","finish_reason":null}]}

data: {"id":"cmpl-1","object":"text_completion","model":"m","choices":[{"index":0,"text":"word ","finish_reason":"length"}]}

data: {"id":"cmpl-1","object":"text_completion","model":"m","choices":[],"usage":{"prompt_tokens":8,"completion_tokens":4,"total_tokens":12}}

data: [DONE]

`

var noopResponse = []byte("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: " +
	strconv.Itoa(len(noopBody)) + "\r\n\r\n" + noopBody)

// noopServer serves every POST with the same finished four-token stream,
// at once, with as little work as an HTTP server can do: one read and one
// write per request. Load against it measures the client's own ceiling,
// which the simulator's cost hides.
func noopServer(ctx context.Context) (string, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("no-op server: %w", err)
	}
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				// Out of descriptors, say: the load will fail and say so;
				// the server must not stop accepting.
				time.Sleep(5 * time.Millisecond)
				continue
			}
			go serveNoop(ctx, c)
		}
	}()
	return "http://" + ln.Addr().String(), nil
}

func serveNoop(ctx context.Context, c net.Conn) {
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	tp := textproto.NewReader(bufio.NewReaderSize(c, 4<<10))
	for {
		if _, err := tp.ReadLine(); err != nil { // request line
			return
		}
		h, err := tp.ReadMIMEHeader()
		if err != nil {
			return
		}
		n, _ := strconv.Atoi(strings.TrimSpace(h.Get("Content-Length")))
		if _, err := tp.R.Discard(n); err != nil {
			return
		}
		if _, err := c.Write(noopResponse); err != nil {
			return
		}
	}
}

// OpenLoopNoop runs one constant-rate point against a noopServer in this
// process and reports the cores the process used, nearly all of them the
// client's.
func OpenLoopNoop(ctx context.Context, rate float64, d time.Duration) (RatePoint, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	u, err := noopServer(ctx)
	if err != nil {
		return RatePoint{}, err
	}
	start, cpu0 := time.Now(), cpuTime()
	p, err := openLoop(ctx, u, rate, d)
	p.ClientCPU = (cpuTime() - cpu0).Seconds() / time.Since(start).Seconds()
	return p, err
}

package sim

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The simulator's own cost: process CPU time per request and per streamed
// token while lean clients (one kept-alive connection each, a prebuilt
// request, a read loop) keep it busy. The clients' share is in the figure,
// so it is an upper bound on the simulator's.
//
//	go test ./internal/sim -run '^$' -bench Serve -benchtime 20000x
func BenchmarkServeShortRequests(b *testing.B)  { benchServe(b, 64, 8, 4) }
func BenchmarkServeStreamedTokens(b *testing.B) { benchServe(b, 256, 8, 512) }

func benchServe(b *testing.B, streams, input, output int) {
	p := Profile{Name: "bench", Model: "m", MaxNumSeqs: 1 << 20, MaxBatchedTokens: 1 << 30,
		StepBase: time.Millisecond, TokensPerStep: 1, MaxModelLen: 1 << 20}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	u, err := New(p).Listen(ctx, "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := strings.TrimPrefix(u, "http://")
	body := fmt.Sprintf(`{"model":"m","prompt":%q,"max_tokens":%d,"stream":true}`, strings.TrimSpace(strings.Repeat("w ", input)), output)
	req := []byte(fmt.Sprintf("POST /v1/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", addr, len(body), body))

	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, streams)
	b.ResetTimer()
	cpu0 := cpuNanos()
	start := time.Now()
	for range min(streams, b.N) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			r := bufio.NewReaderSize(c, 64<<10)
			for next.Add(1) <= int64(b.N) {
				if _, err := c.Write(req); err != nil {
					errs <- err
					return
				}
				if err := readStream(r); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	cpu := cpuNanos() - cpu0
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/req")
	b.ReportMetric(float64(cpu)/float64(b.N*output), "cpu-ns/token")
	b.ReportMetric(float64(b.N*output)/(float64(cpu)/1e9), "tokens/cpu-s")
	b.ReportMetric(float64(b.N)/wall.Seconds(), "req/s")
}

// readStream reads one chunked SSE response to its end.
func readStream(r *bufio.Reader) error {
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return err
		}
		if bytes.HasPrefix(line, []byte("HTTP/1.1 ")) && !bytes.HasPrefix(line, []byte("HTTP/1.1 200")) {
			return fmt.Errorf("status %s", line)
		}
		if bytes.Equal(line, []byte("0\r\n")) { // the last chunk
			_, err := r.ReadSlice('\n')
			return err
		}
	}
}

func cpuNanos() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

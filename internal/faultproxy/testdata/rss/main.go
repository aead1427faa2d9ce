// Command rss measures the fault proxy's memory under many concurrent
// large request bodies (issue 26, F15): it starts the proxy in a child
// process in front of an upstream that reads and discards every body,
// has -clients connections each send -mb MB of a body declared one MiB
// longer and hold there, and reads the child's peak resident memory
// (VmHWM) while they hold and its resident memory (VmRSS) after they
// close. Linux only (/proc).
//
//	go run ./internal/faultproxy/testdata/rss -clients 24 -mb 60
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/benchci/benchci/internal/faultproxy"
)

func main() {
	serve := flag.String("serve", "", "run the proxy in front of this upstream and print its URL (the child)")
	clients := flag.Int("clients", 24, "concurrent connections")
	mb := flag.Int("mb", 60, "MB each sends")
	flag.Parse()
	if *serve != "" {
		p, err := faultproxy.New(*serve, faultproxy.Faults{})
		if err != nil {
			log.Fatal(err)
		}
		u, err := p.Listen(context.Background(), "127.0.0.1:0")
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(u)
		select {}
	}

	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "%d\n", n)
	}))
	defer up.Close()
	child := exec.Command(os.Args[0], "-serve", up.URL)
	out, err := child.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		log.Fatal(err)
	}
	defer child.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		log.Fatal(err)
	}
	addr := strings.TrimPrefix(strings.TrimSpace(line), "http://")
	pid := child.Process.Pid
	fmt.Printf("idle: %s\n", mem(pid))

	size := *mb * 1_000_000
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = 'x'
	}
	var sent, hold sync.WaitGroup
	release := make(chan struct{})
	conns := make([]net.Conn, *clients)
	start := time.Now()
	for i := range conns {
		sent.Add(1)
		hold.Add(1)
		go func() {
			defer hold.Done()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				log.Fatal(err)
			}
			conns[i] = c
			fmt.Fprintf(c, "POST /v1/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", addr, size+1<<20)
			for left := size; left > 0; {
				n := min(left, len(chunk))
				if _, err := c.Write(chunk[:n]); err != nil {
					log.Printf("client %d: %v after %d bytes", i, err, size-left)
					break
				}
				left -= n
			}
			sent.Done()
			<-release
			c.Close()
		}()
	}
	sent.Wait()
	time.Sleep(500 * time.Millisecond) // let the proxy take in what it will
	fmt.Printf("%d clients x %d MB sent in %.1f s, holding: %s\n", *clients, *mb, time.Since(start).Seconds(), mem(pid))
	close(release)
	hold.Wait()
	time.Sleep(2 * time.Second)
	fmt.Printf("2 s after they closed: %s\n", mem(pid))
}

// mem reads a process's resident and peak resident memory.
func mem(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return err.Error()
	}
	var rss, hwm string
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) >= 2 && f[0] == "VmRSS:":
			rss = kb(f[1])
		case len(f) >= 2 && f[0] == "VmHWM:":
			hwm = kb(f[1])
		}
	}
	return fmt.Sprintf("RSS %s, peak RSS %s", rss, hwm)
}

func kb(s string) string {
	var n float64
	fmt.Sscan(s, &n)
	return fmt.Sprintf("%.0f MiB", n/1024)
}

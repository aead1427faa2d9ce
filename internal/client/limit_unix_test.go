//go:build unix

package client

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A process out of descriptors cannot dial: that is the client's failure,
// a kind of its own, not a "connect" error the server's rate would count.
// The exhaustion happens in a child process, so no other test loses a
// descriptor.
func TestDescriptorExhaustionIsTheClients(t *testing.T) {
	if os.Getenv("BENCHCI_TEST_EXHAUST_FDS") == "1" {
		exhaustedChild()
		return
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDescriptorExhaustionIsTheClients$")
	cmd.Env = append(os.Environ(), "BENCHCI_TEST_EXHAUST_FDS=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "kind=client_limit") || !strings.Contains(string(out), "too many open files") {
		t.Errorf("child said %q; want kind=client_limit and the error", out)
	}
}

func exhaustedChild() {
	c, err := New(Options{BaseURL: "http://127.0.0.1:9", API: "chat", Model: "m", Timeout: 5 * time.Second})
	if err != nil {
		fmt.Println("new:", err)
		os.Exit(1)
	}
	lim := syscall.Rlimit{Cur: 64, Max: 64}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		fmt.Println("setrlimit:", err)
		os.Exit(1)
	}
	var files []*os.File
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			break // EMFILE: every descriptor is taken
		}
		files = append(files, f)
	}
	var res Result
	c.Do(context.Background(), []byte(`{}`), "1", &res)
	fmt.Printf("kind=%s detail=%s held=%d\n", res.Err, res.Detail, len(files))
}

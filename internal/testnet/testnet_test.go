package testnet

import (
	"net"
	"runtime"
	"testing"
)

func TestAddrIsHeldButListenable(t *testing.T) {
	addr := Addr(t)
	if _, err := net.Dial("tcp", addr); err == nil {
		t.Fatalf("something answers at %s before the server starts", addr)
	}
	if runtime.GOOS == "linux" {
		// The kernel must not hand the reserved port to another bind to :0.
		for i := 0; i < 2000; i++ {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			got := ln.Addr().String()
			ln.Close()
			if got == addr {
				t.Fatalf("bind to :0 was given the reserved %s", addr)
			}
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the test's own server cannot listen on the reserved address: %v", err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial after listening: %v", err)
	}
	c.Close()
}

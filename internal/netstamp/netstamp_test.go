package netstamp

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"runtime"
	"testing"
	"time"
)

// pair returns a connected client and server; stamped says whether the
// client's socket asks for kernel stamps.
func pair(t *testing.T, stamped bool) (client *Conn, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	d := net.Dialer{}
	if stamped {
		d.Control = Control
	}
	nc, err := d.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	client = Wrap(nc.(*net.TCPConn))
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// stampsOn waits until the kernel stamps packets: Linux turns stamping on
// a moment after the first socket asks for it.
func stampsOn(t *testing.T) {
	t.Helper()
	if !Ready(2 * time.Second) {
		t.Fatal("the kernel gave no receive stamps in 2s")
	}
}

// Bytes that wait in the socket keep the time they arrived, not the time
// they were read.
func TestArrivedIsArrival(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("kernel stamps are read on Linux only")
	}
	stampsOn(t)
	c, s := pair(t, true)
	if !c.Arrived().IsZero() {
		t.Fatal("stamp before any read")
	}
	// Linux turns stamping on for every socket through one switch that it
	// flips from a work queue: when another test's stamping socket closes
	// and this one's opens, a busy machine can leave a packet unstamped.
	// The switch stays on once this socket holds it, so a later packet is
	// stamped; a read that is never stamped in five fails.
	for attempt := 1; ; attempt++ {
		if _, err := s.Write([]byte("hello")); err != nil {
			t.Fatal(err)
		}
		written := time.Now() // on loopback the bytes are in the socket once Write returns
		time.Sleep(30 * time.Millisecond)
		buf := make([]byte, 16)
		n, err := c.Read(buf)
		if err != nil || string(buf[:n]) != "hello" {
			t.Fatalf("read %q, %v", buf[:n], err)
		}
		if !c.FromKernel() {
			if attempt < 5 {
				continue
			}
			t.Fatal("read not stamped by the kernel in 5 tries")
		}
		if at := c.Arrived(); at.After(written.Add(stampSlack)) || at.Before(written.Add(-time.Second)) {
			t.Errorf("arrived %v after the write returned, want at or before it", at.Sub(written))
		}
		return
	}
}

// stampSlack is how long after a loopback write returned its kernel
// stamp may be: a loaded machine can defer the receive path to ksoftirqd
// (a CI run stamped a chunk 1.1 ms after its write returned). Half the
// 30 ms before the read still tells an arrival from the read's time.
const stampSlack = 15 * time.Millisecond

// Without stamps, the time the read returned stands in.
func TestArrivedFallsBackToReadTime(t *testing.T) {
	c, s := pair(t, false)
	s.Write([]byte("x"))
	written := time.Now()
	time.Sleep(30 * time.Millisecond)
	var b [1]byte
	if _, err := c.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	if d := c.Arrived().Sub(written); d < 30*time.Millisecond || c.FromKernel() {
		t.Errorf("arrived %v after the write, want the read's time (≥ 30ms)", d)
	}
}

// Accepted connections inherit the listener's stamps.
func TestListenerStampsRequests(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("kernel stamps are read on Linux only")
	}
	stampsOn(t)
	ln, err := Listen(context.Background(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	sc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	got := FromContext(ConnContext(context.Background(), sc))
	if got == nil {
		t.Fatal("the accepted connection carries no stamps")
	}
	// As in TestArrivedIsArrival: a packet that crossed the kernel's
	// switch being flipped on may go unstamped; a later one may not.
	for attempt := 1; ; attempt++ {
		cc.Write([]byte("GET / HTTP/1.1\r\n\r\n"))
		written := time.Now()
		time.Sleep(30 * time.Millisecond)
		buf := make([]byte, 64)
		if _, err := sc.Read(buf); err != nil {
			t.Fatal(err)
		}
		if !got.FromKernel() && attempt < 5 {
			continue
		}
		if !got.FromKernel() || got.Arrived().After(written.Add(stampSlack)) {
			t.Errorf("accepted connection: arrival %v not stamped by the kernel (from kernel %v)", got.Arrived().Sub(written), got.FromKernel())
		}
		return
	}
}

func TestReadEOFAndDeadline(t *testing.T) {
	c, s := pair(t, true)
	c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	var b [4]byte
	if _, err := c.Read(b[:]); err == nil || !isTimeout(err) {
		t.Errorf("read past deadline: %v, want a timeout", err)
	}
	c.SetReadDeadline(time.Time{})
	s.Write([]byte("ab"))
	s.Close()
	got, err := io.ReadAll(c)
	if string(got) != "ab" || err != nil {
		t.Errorf("read %q, %v; want ab then EOF", got, err)
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

func TestIdle(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Idle only tells on Linux")
	}
	c, s := pair(t, true)
	if !c.Idle(false) {
		t.Error("open, quiet connection not idle")
	}
	s.Write([]byte("HTTP/1.1 408 Request Timeout\r\n\r\n"))
	waitFor(t, func() bool { return !c.Idle(false) })
	if !c.Idle(true) {
		t.Error("pending bytes refused although allowed")
	}
	c2, s2 := pair(t, true)
	s2.Close()
	waitFor(t, func() bool { return !c2.Idle(true) })
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 2s")
		}
		time.Sleep(time.Millisecond)
	}
}

// A read allocates nothing: it runs for every chunk of every stream.
func TestReadAllocatesNothing(t *testing.T) {
	c, s := pair(t, true)
	var b [8]byte
	allocs := testing.AllocsPerRun(200, func() {
		s.Write(b[:1])
		c.Read(b[:])
	})
	if allocs > 0 {
		t.Errorf("%.1f allocations per write and read, want 0", allocs)
	}
}

func cmsg(level, typ int32, data []byte) []byte {
	b := make([]byte, 16+len(data))
	binary.NativeEndian.PutUint64(b, uint64(16+len(data)))
	binary.NativeEndian.PutUint32(b[8:], uint32(level))
	binary.NativeEndian.PutUint32(b[12:], uint32(typ))
	copy(b[16:], data)
	for len(b)%8 != 0 {
		b = append(b, 0)
	}
	return b
}

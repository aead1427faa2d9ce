// Package netstamp gives TCP connections the time their bytes arrived.
//
// A benchmark client with hundreds of streams cannot read them all the
// instant data lands: a chunk can wait in the socket for milliseconds while
// the process serves others, and a clock read after the read returns counts
// that wait as the server's latency. On Linux the kernel stamps each packet
// as it reaches the socket (SO_TIMESTAMPNS) and recvmsg returns the stamp
// of the newest packet read, so the time is the network's, not the
// scheduler's. Elsewhere, and whenever a stamp is missing, the time the
// read returned stands in.
package netstamp

import (
	"context"
	"net"
	"sync/atomic"
	"time"
)

// epoch anchors stamps to the monotonic clock; a stamp is stored as the
// offset from it, so it can be read from another goroutine without a lock.
var epoch = time.Now()

// Conn is a TCP connection that knows when the bytes of its latest read
// arrived.
type Conn struct {
	*net.TCPConn
	at     atomic.Int64  // offset from epoch of the latest read's arrival
	kernel atomic.Bool   // whether that time is the kernel's
	reads  atomic.Uint64 // reads that returned data
	sys
}

// Arrived is when the bytes of the latest read that returned data arrived;
// zero before any.
func (c *Conn) Arrived() time.Time {
	d := c.at.Load()
	if d == 0 {
		return time.Time{}
	}
	return epoch.Add(time.Duration(d))
}

// FromKernel reports whether the latest read's time is the kernel's stamp.
// The first packets on a machine can come without one: Linux turns
// stamping on for the whole stack a moment after the first socket asks.
func (c *Conn) FromKernel() bool { return c.kernel.Load() }

// Reads counts the reads that returned data. Bytes delivered by one read
// share its stamp, so two events with the same count came in one read: the
// gap between them is not measured, whatever the stamps say.
func (c *Conn) Reads() uint64 { return c.reads.Load() }

func (c *Conn) stamp(t time.Time, kernel bool) {
	c.at.Store(max(int64(t.Sub(epoch)), 1))
	c.kernel.Store(kernel)
	c.reads.Add(1)
}

// Listener wraps accepted connections in Conn.
type Listener struct{ net.Listener }

// Accept waits for a connection and wraps it.
func (l Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		return Wrap(tc), nil
	}
	return c, nil
}

// Listen listens on a TCP address with arrival stamps on; accepted
// connections inherit them.
func Listen(ctx context.Context, addr string) (Listener, error) {
	lc := net.ListenConfig{Control: Control}
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return Listener{}, err
	}
	return Listener{ln}, nil
}

type connKey struct{}

// ConnContext is an http.Server ConnContext function that makes the
// connection available to handlers through FromContext.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if sc, ok := c.(*Conn); ok {
		return context.WithValue(ctx, connKey{}, sc)
	}
	return ctx
}

// FromContext returns the connection ConnContext stored, or nil.
func FromContext(ctx context.Context) *Conn {
	c, _ := ctx.Value(connKey{}).(*Conn)
	return c
}

// Ready reports whether this machine stamps arrivals, waiting up to timeout
// for Linux to turn stamping on: it exchanges bytes over a loopback
// connection until a read carries the kernel's stamp.
func Ready(timeout time.Duration) bool {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return false
	}
	defer ln.Close()
	d := net.Dialer{Control: Control, Timeout: timeout}
	nc, err := d.Dial("tcp", ln.Addr().String())
	if err != nil {
		return false
	}
	defer nc.Close()
	peer, err := ln.Accept()
	if err != nil {
		return false
	}
	defer peer.Close()
	c := Wrap(nc.(*net.TCPConn))
	var b [1]byte
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if _, err := peer.Write(b[:]); err != nil {
			return false
		}
		if _, err := c.Read(b[:]); err != nil {
			return false
		}
		if c.FromKernel() {
			return true
		}
	}
	return false
}

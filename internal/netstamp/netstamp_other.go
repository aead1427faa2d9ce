//go:build !linux

package netstamp

import (
	"net"
	"syscall"
	"time"
)

type sys struct{}

// Control does nothing here: there are no kernel stamps to turn on.
func Control(_, _ string, _ syscall.RawConn) error { return nil }

// Wrap returns c as a Conn stamped with the time reads return.
func Wrap(c *net.TCPConn) *Conn { return &Conn{TCPConn: c} }

// Read reads like net.Conn's Read and stamps the time it returned.
func (c *Conn) Read(p []byte) (int, error) {
	n, err := c.TCPConn.Read(p)
	if n > 0 {
		c.stamp(time.Now(), false)
	}
	return n, err
}

// Idle cannot tell here; a stale connection is retried once instead.
func (c *Conn) Idle(bool) bool { return true }

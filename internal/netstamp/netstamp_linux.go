package netstamp

import (
	"encoding/binary"
	"io"
	"net"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sys is the per-connection state of a read with recvmsg. One read's
// arguments and results are fields rather than closure captures, so that a
// read allocates nothing.
type sys struct {
	rc     syscall.RawConn
	p      []byte
	n      int
	oobn   int
	err    error
	msg    unix.Msghdr
	iov    unix.Iovec
	oob    [64]byte
	recvFn func(fd uintptr) bool
}

// Control turns arrival stamps on for a socket; use it as a net.Dialer or
// net.ListenConfig Control function. Failure is not an error: reads then
// fall back to the time they return.
func Control(_, _ string, c syscall.RawConn) error {
	c.Control(func(fd uintptr) {
		unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	})
	return nil
}

// Wrap returns c as a Conn. Stamps come only if Control turned them on for
// its socket (or its listener's).
func Wrap(c *net.TCPConn) *Conn {
	w := &Conn{TCPConn: c}
	if rc, err := c.SyscallConn(); err == nil {
		w.rc = rc
		w.recvFn = w.recv
	}
	return w
}

// recv is one recvmsg. It fills a message header kept in the Conn rather
// than calling unix.Recvmsg, whose locals escape: one allocation per read.
func (c *Conn) recv(fd uintptr) bool {
	c.iov.Base = &c.p[0]
	c.iov.SetLen(len(c.p))
	c.msg.Iov = &c.iov
	c.msg.SetIovlen(1)
	c.msg.Control = &c.oob[0]
	c.msg.SetControllen(len(c.oob))
	r, _, errno := unix.Syscall(unix.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&c.msg)), unix.MSG_CMSG_CLOEXEC)
	c.iov.Base = nil // do not keep the caller's buffer
	if errno == unix.EAGAIN || errno == unix.EINTR {
		return false // wait until readable, then try again
	}
	c.n, c.oobn, c.err = int(r), int(c.msg.Controllen), nil
	if errno != 0 {
		c.n, c.oobn, c.err = 0, 0, errno
	}
	return true
}

// Read reads like net.Conn's Read and stamps the arrival of what it read.
func (c *Conn) Read(p []byte) (int, error) {
	if c.rc == nil {
		n, err := c.TCPConn.Read(p)
		if n > 0 {
			c.stamp(time.Now(), false)
		}
		return n, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	c.p, c.n, c.oobn, c.err = p, 0, 0, nil
	err := c.rc.Read(c.recvFn)
	c.p = nil
	if err != nil {
		return 0, err // deadline or closed, from the poller
	}
	if c.err != nil {
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError("recvmsg", c.err)}
	}
	if c.n == 0 {
		return 0, io.EOF
	}
	now := time.Now()
	at, kernel := now, false
	if ts, ok := parseStamp(c.oob[:c.oobn]); ok {
		// The stamp is wall-clock time; its distance from now moves the
		// monotonic reading back. A stamp from the future or from long
		// ago means the wall clock stepped: keep the read's own time.
		if lag := time.Duration(now.UnixNano() - ts); lag >= 0 && lag < time.Minute {
			at, kernel = now.Add(-lag), true
		}
	}
	c.stamp(at, kernel)
	return c.n, nil
}

// parseStamp finds SCM_TIMESTAMPNS in a control message buffer and returns
// it in nanoseconds since the epoch. Only the 64-bit layout is read (a
// 16-byte header, then two int64); elsewhere there is no stamp.
func parseStamp(oob []byte) (int64, bool) {
	const hdr = 16
	if unix.SizeofCmsghdr != hdr {
		return 0, false
	}
	for len(oob) >= hdr {
		l := binary.NativeEndian.Uint64(oob)
		level := int32(binary.NativeEndian.Uint32(oob[8:]))
		typ := int32(binary.NativeEndian.Uint32(oob[12:]))
		if l < hdr || l > uint64(len(oob)) {
			return 0, false
		}
		if level == unix.SOL_SOCKET && typ == unix.SCM_TIMESTAMPNS && l >= hdr+16 {
			sec := int64(binary.NativeEndian.Uint64(oob[hdr:]))
			nsec := int64(binary.NativeEndian.Uint64(oob[hdr+8:]))
			return sec*1e9 + nsec, true
		}
		next := (l + 7) &^ 7 // messages are aligned to 8 bytes
		if next > uint64(len(oob)) {
			break
		}
		oob = oob[next:]
	}
	return 0, false
}

// Idle reports whether an idle connection can carry a request: the peer
// has not closed it and, unless pendingOK, has sent nothing unasked (an
// HTTP server's 408, say). TLS peers send records unasked (session
// tickets), so callers with TLS pass pendingOK.
func (c *Conn) Idle(pendingOK bool) bool {
	if c.rc == nil {
		return true
	}
	ok := false
	c.rc.Control(func(fd uintptr) {
		var b [1]byte
		n, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		switch {
		case err == unix.EAGAIN:
			ok = true
		case err == nil && n > 0:
			ok = pendingOK
		}
	})
	return ok
}

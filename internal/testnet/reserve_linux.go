package testnet

import (
	"fmt"
	"syscall"
)

// reserve binds a TCP socket with SO_REUSEADDR to a kernel-chosen loopback
// port and never listens on it. Dials to the port are refused, the kernel
// skips it when it picks ports for other binds to :0, and a server that
// binds it explicitly with SO_REUSEADDR (Go's net.Listen always sets it)
// still succeeds, because Linux lets a listener share a port with bound
// sockets that are not listening when both set the option.
func reserve() (string, func(), error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return "", nil, fmt.Errorf("reserve a port: %w", err)
	}
	fail := func(step string, err error) (string, func(), error) {
		syscall.Close(fd)
		return "", nil, fmt.Errorf("reserve a port: %s: %w", step, err)
	}
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1); err != nil {
		return fail("SO_REUSEADDR", err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fail("bind", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		return fail("getsockname", err)
	}
	port := sa.(*syscall.SockaddrInet4).Port
	return fmt.Sprintf("127.0.0.1:%d", port), func() { syscall.Close(fd) }, nil
}

//go:build !linux

package testnet

import "net"

// reserve falls back to a port free at the moment of asking; elsewhere the
// sharing rules of SO_REUSEADDR differ, so nothing is held.
func reserve() (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	defer ln.Close()
	return ln.Addr().String(), func() {}, nil
}

//go:build !linux

package procwatch

import "errors"

// Listener finds no process outside Linux.
func Listener(int) (int, error) {
	return 0, errors.New("the process behind a port is found on Linux only")
}

//go:build linux

package procwatch

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// maxFDScan bounds the descriptors Listener reads: a machine with more
// open descriptors than this is searched no further.
const maxFDScan = 1 << 20

// Listener finds the process listening on TCP port on this machine: the
// socket's inode in /proc/net/tcp{,6}, then the process holding it
// (/proc/PID/fd). A process of another user cannot be read: its
// descriptors are hidden, and the error says so.
func Listener(port int) (int, error) {
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		if err := listening(table, port, inodes); err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, err
		}
	}
	if len(inodes) == 0 {
		return 0, fmt.Errorf("no socket listens on port %d here", port)
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	scanned := 0
	for _, e := range procs {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := filepath.Join("/proc", e.Name(), "fd")
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if scanned++; scanned > maxFDScan {
				return 0, fmt.Errorf("more than %d descriptors on this machine: the listener on port %d was not found", maxFDScan, port)
			}
			l, err := os.Readlink(filepath.Join(dir, fd.Name()))
			if err == nil && strings.HasPrefix(l, "socket:[") && inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] {
				return pid, nil
			}
		}
	}
	return 0, fmt.Errorf("port %d listens, but its process cannot be read (another user's?)", port)
}

// listening adds to inodes the sockets of table in the LISTEN state on
// port.
func listening(table string, port int, inodes map[string]bool) error {
	f, err := os.Open(table)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 0; sc.Scan(); n++ {
		fs := strings.Fields(sc.Text())
		if n == 0 || len(fs) < 10 || fs[3] != "0A" { // the header; 0A: LISTEN
			continue
		}
		_, hexPort, ok := strings.Cut(fs[1], ":")
		if p, err := strconv.ParseUint(hexPort, 16, 16); ok && err == nil && int(p) == port {
			inodes[fs[9]] = true
		}
	}
	return sc.Err()
}

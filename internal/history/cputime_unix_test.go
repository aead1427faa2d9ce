//go:build unix

package history

import (
	"syscall"
	"time"
)

// cpuTime is the process's user and system CPU time: on a machine shared
// with other work, the CPU time an op takes says more about history than
// its wall time, which says as much about the neighbours.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

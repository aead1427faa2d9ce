//go:build unix

package fdlimit

import (
	"math"
	"syscall"
)

func soft() int {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0
	}
	if l.Cur > math.MaxInt32 { // RLIM_INFINITY, or near enough
		return math.MaxInt32
	}
	return int(l.Cur)
}

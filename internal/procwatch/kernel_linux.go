//go:build linux

package procwatch

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// kernel reads /proc.
type kernel struct{}

// stopped reads the state in /proc/PID/stat: T (stopped by a signal) or
// t (stopped by a tracer).
func (kernel) stopped(pid int) (bool, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false, false
	}
	// The command name is in parentheses and may hold spaces: the state
	// is the first field after the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return false, false
	}
	st := s[i+2]
	if st == 'Z' || st == 'X' {
		return false, false
	}
	return st == 'T' || st == 't', true
}

// maxThreads bounds the threads read a sample: a server with more is
// summed over its first ones (schedstat's read costs a file open each).
const maxThreads = 512

// sched sums /proc/PID/task/*/schedstat: nanoseconds on a CPU, and
// runnable but waiting for one.
func (kernel) sched(pid int) (run, wait time.Duration, ok bool) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	f, err := os.Open(dir)
	if err != nil {
		return 0, 0, false
	}
	names, err := f.Readdirnames(maxThreads)
	f.Close()
	if err != nil || len(names) == 0 {
		return 0, 0, false
	}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n, "schedstat"))
		if err != nil {
			continue // the thread ended
		}
		fs := strings.Fields(string(b))
		if len(fs) < 2 {
			return 0, 0, false
		}
		r, err1 := strconv.ParseInt(fs[0], 10, 64)
		w, err2 := strconv.ParseInt(fs[1], 10, 64)
		if err1 != nil || err2 != nil || r < 0 || w < 0 {
			return 0, 0, false
		}
		run += time.Duration(r)
		wait += time.Duration(w)
	}
	return run, wait, true
}

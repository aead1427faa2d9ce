package clock

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// timerFD is a non-blocking timerfd read through the network poller.
type timerFD struct {
	fd  int
	f   *os.File
	buf [8]byte
}

func newTimerFD() (*timerFD, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	// os.NewFile registers a non-blocking fd with the poller.
	return &timerFD{fd: fd, f: os.NewFile(uintptr(fd), "timerfd")}, nil
}

// wait returns when the timerfd fires or, whichever comes first, when a
// Go timer for the same moment does (the read's deadline). An idle
// process's poller wakes for the fd at once, while its Go timers wait in
// whole milliseconds; a busy process checks Go timers at every scheduling
// decision but its poller only now and then. Setting the timer again
// clears an expiry the deadline beat.
func (t *timerFD) wait(d time.Duration) error {
	its := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(d))}
	if err := unix.TimerfdSettime(t.fd, 0, &its, nil); err != nil {
		return err
	}
	if err := t.f.SetReadDeadline(time.Now().Add(d)); err != nil {
		return err
	}
	if _, err := t.f.Read(t.buf[:]); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		return err
	}
	return nil
}

func (t *timerFD) close() { t.f.Close() }

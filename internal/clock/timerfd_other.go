//go:build !linux

package clock

import (
	"errors"
	"time"
)

type timerFD struct{}

func newTimerFD() (*timerFD, error)       { return nil, errors.New("no timerfd") }
func (*timerFD) wait(time.Duration) error { return errors.ErrUnsupported }
func (*timerFD) close()                   {}

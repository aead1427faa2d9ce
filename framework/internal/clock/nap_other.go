//go:build !linux

package clock

import "time"

func nap(d time.Duration) { time.Sleep(d) }

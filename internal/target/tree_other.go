//go:build !linux

package target

import "syscall"

// adopt is Linux's; elsewhere the process group alone is stopped.
func adopt(*syscall.SysProcAttr) {}

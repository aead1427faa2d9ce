package target

import "syscall"

// adopt asks the kernel to SIGKILL the server when benchci dies, so a
// killed run leaves no server holding the port.
func adopt(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGKILL
}

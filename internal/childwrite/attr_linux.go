package childwrite

import "syscall"

// childAttr makes the child die with the server (its pipe would end too,
// but a child blocked on a full disk would not notice).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

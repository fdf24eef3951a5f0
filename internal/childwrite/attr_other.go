//go:build !linux

package childwrite

import "syscall"

// childAttr: only Linux has Pdeathsig; elsewhere the closed pipe ends the
// child.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

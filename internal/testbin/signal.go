package testbin

import "syscall"

// Send sends sig to the process and returns the error of sending it: a
// Signal for code that cannot fail a test where it runs, such as a
// goroutine that pauses (SIGSTOP) and resumes (SIGCONT) members of a
// cluster while clients call them.
func (p *Proc) Send(sig syscall.Signal) error { return p.cmd.Process.Signal(sig) }

package durable

import (
	"syscall"
	"time"
)

// processCPU is the CPU time this process has used, user and system. On a
// shared machine it measures a benchmark's own cost where wall time measures
// the neighbours too.
func processCPU() time.Duration {
	var r syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &r); err != nil {
		panic(err)
	}
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

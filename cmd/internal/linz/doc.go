// Package linz checks that histories of calls to governord are linearizable:
// that every call seems to take effect at one instant between its call and
// its return, in an order that a single correct copy of the state would
// give. It holds porcupine models of three guarantees (Quota, Idempotent,
// LeasePool), a Recorder that concurrent clients write their calls into, and
// Check, which fails a test with porcupine's visualisation of a history that
// is not linearizable.
//
// An outcome a client never learned (a timeout, a lost reply, a crash) is
// recorded as Unknown. Following porcupine's convention such a call returns
// at the end of time, and the models accept any answer for it: the checker
// may then place it anywhere after its call, which covers both "it took
// effect" and "it never did", because an effect placed after every other
// call is seen by none.
package linz

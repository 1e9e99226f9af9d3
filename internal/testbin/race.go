//go:build race

package testbin

// race is whether the tests run with the race detector; the commands are
// then built with it too.
const race = true

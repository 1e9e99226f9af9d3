package bench

import (
	"os"
	"testing"

	"governor.dev/governor/cmd/internal/pgtest"
)

// TestMain runs governord when the restart scenario starts this test
// binary as its governord process, and the tests otherwise.
func TestMain(m *testing.M) {
	if code, ok := ServeGovernord(); ok {
		os.Exit(code)
	}
	os.Exit(pgtest.Main(m))
}

package eventlog

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"governor.dev/governor/cmd/internal/pgtest"
)

func TestMain(m *testing.M) {
	code := pgtest.Main(m)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines leaked:", err)
			code = 1
		}
	}
	os.Exit(code)
}

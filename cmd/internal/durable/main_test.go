package durable

import (
	"os"
	"testing"

	"governor.dev/governor/cmd/internal/pgtest"
)

func TestMain(m *testing.M) {
	if url := os.Getenv(crashChildEnv); url != "" {
		os.Exit(crashChild(url))
	}
	os.Exit(pgtest.Main(m))
}

package daemon

import (
	"io"
	"log/slog"
)

// quietLog discards everything; tests that read the log make their own.
func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

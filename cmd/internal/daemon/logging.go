package daemon

import (
	"bytes"
	"context"
	"io"
	"log"
	"log/slog"

	"governor.dev/governor/cmd/internal/config"
)

// newLogger builds the structured log the configuration asks for, on w.
func newLogger(c config.Log, w io.Writer) *slog.Logger {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.Level)); err != nil {
		level = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: level}
	if c.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// httpErrorLog routes net/http's own messages into the structured log. A
// failed TLS handshake (a scanner, a plain-text client on the TLS port) is
// routine and logged at debug; anything else at warn.
func httpErrorLog(l *slog.Logger, listener string) *log.Logger {
	return log.New(httpLogWriter{l: l.With("listener", listener)}, "", 0)
}

type httpLogWriter struct{ l *slog.Logger }

func (w httpLogWriter) Write(p []byte) (int, error) {
	msg := string(bytes.TrimSpace(p))
	level := slog.LevelWarn
	if bytes.Contains(p, []byte("TLS handshake error")) {
		level = slog.LevelDebug
	}
	w.l.Log(context.Background(), level, msg)
	return len(p), nil
}

package daemon

import (
	"io"
	"log/slog"
	"net/http"
)

// quietLog discards everything; tests that read the log make their own.
func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// h2cClient speaks HTTP/2 without TLS, as a plain-text gRPC client does.
func h2cClient() *http.Client {
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: &protocols}}
}

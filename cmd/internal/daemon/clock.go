package daemon

import (
	"net/url"
	"time"
)

// wallClock is the engine's clock outside tests.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// redactURL names the record for logs and messages, hiding a password.
func redactURL(raw string) string {
	if raw == "" {
		return "memory: nothing survives a restart"
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "(a URL that does not parse)"
	}
	return u.Redacted()
}

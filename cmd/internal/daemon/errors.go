package daemon

import "errors"

var (
	// ErrPlaintext is returned by Start when the API would listen in plain
	// text on an address other than loopback without allow_plaintext: every
	// call carries a key or a token, which would cross the network in clear.
	ErrPlaintext = errors.New("daemon: a non-loopback listen address needs TLS (tls.cert_file and tls.key_file) or allow_plaintext: true")

	// ErrAddress is what Start's error wraps when the API's or the metrics'
	// address cannot be bound (in use, not local, malformed): a mistake in
	// the configuration or the flags, found before anything was created.
	ErrAddress = errors.New("daemon: an address cannot be listened on")

	// ErrCertificate is what Start's error wraps when the TLS certificate
	// or key is missing, unreadable, garbage, expired or not a pair: a
	// mistake in the configuration, found before anything was created.
	ErrCertificate = errors.New("daemon: the TLS certificate cannot be used")

	// ErrRecordFailed is what a daemon stopped by a failed commit reports
	// (wrapping the commit's error): the engine was ahead of its record, so
	// it stopped serving, and it must be started again from the record.
	ErrRecordFailed = errors.New("daemon: a commit to the record failed; start governord again to rebuild from the record")
)

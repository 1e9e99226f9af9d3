package clientconn

import "errors"

// ErrConfig marks every error about the connection settings: a malformed
// address, an unreadable CA file, a TLS variable that is not a boolean.
var ErrConfig = errors.New("governor connection settings")

package durable

import "errors"

// ErrClosed is returned by calls on a closed Store.
var ErrClosed = errors.New("durable: store closed")

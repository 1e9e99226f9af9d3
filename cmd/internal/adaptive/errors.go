package adaptive

import "errors"

// ErrUnknownClass is returned by Step for a class the controller was not
// given.
var ErrUnknownClass = errors.New("adaptive: no controller for this class")

package engine

import "governor.dev/governor/cmd/internal/pace"

// pacer is what a long task, one that takes the engine lock step by step,
// does between two of its steps, the lock released: a call waiting for the
// lock takes it before the next step does (package pace).
func (e *Engine) pacer() pace.Pacer { return pace.New(e.wall) }

// Package tui is governor ui: a Bubble Tea screen that lists the children
// of a node with what each has used against its caps, read again every
// second, and edits caps, defaults and cancellation through governord's
// API. Usage turns yellow from 80% of a cap and red at the cap.
//
// The Model is driven by Bubble Tea from one goroutine; every call to
// governord runs in a tea.Cmd and comes back as a message.
package tui

// Package hook is the budget of an agent CLI run, enforced from the CLI's
// own PreToolUse and PostToolUse command hooks.
//
// Each hook call is one short process. It reads the CLI's JSON payload,
// finds or creates the run's node "<source>:<session_id>" under the
// caller's tenant (and, inside a subagent, the subagent's node under the
// run, charging the run one "agents" unit in the same step), and spends one
// "tool_calls" unit with the request id "<run>/<tool_use_id>", so a
// repeated call for the same tool use is not charged twice.
//
// Those calls use the API key directly: they act through the key's durable
// principal session, which remembers request ids across hook processes. A
// session of its own is opened only when it is needed: to read the
// tenant's defaults when a budget flag must fill a gap in them, and to hold
// a "tools" lease while a tool runs. Such a session lives at most the
// lease's maximum hold, so a CLI killed between PreToolUse and PostToolUse
// leaks nothing past that time; its token is kept in a private state file
// until PostToolUse releases the lease and closes the session.
package hook

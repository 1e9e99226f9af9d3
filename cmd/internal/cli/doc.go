// Package cli is the governor command: the agent-CLI hook, the terminal
// screen and the admin verbs, as cobra commands.
//
// Every command reads GOVERNOR_ADDR, GOVERNOR_API_KEY, GOVERNOR_TLS and
// GOVERNOR_CA_FILE, and takes --addr, --tls and --ca-file in their place;
// the address may list a cluster's nodes, whose leader the calls follow.
// Exit codes: 0 when the command did what was asked, 1 when governord
// refused or denied it (a spent budget, an ended node, a lease not held, a
// rejected key), 2 for a mistake in the command line or the settings, or
// when governord cannot be reached. The hook exits 0 to allow a tool and 2
// to refuse it, the code both agent CLIs read as a refusal.
package cli

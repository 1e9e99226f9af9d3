// Package clientconn turns an address, a credential and TLS settings,
// taken from the environment and overridden by options, into a client of
// governord's API. The SDK and the governor command share it, so both read
// GOVERNOR_ADDR, GOVERNOR_API_KEY, GOVERNOR_TLS and GOVERNOR_CA_FILE the
// same way and reject the same mistakes with the same messages. Given a
// comma-separated list of a cluster's nodes, calls go to the leader and
// follow the leader a node names in LeaderHeader.
package clientconn

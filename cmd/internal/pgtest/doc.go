// Package pgtest gives tests a fresh PostgreSQL database each.
//
// [DSN] finds a server in this order:
//
//  1. GOVERNOR_TEST_DSN, if set: a URL of a server on which the tests may
//     create databases (CI starts one and sets it);
//  2. PostgreSQL server binaries under /usr/lib/postgresql/*/bin: a
//     throwaway server for the whole test binary, in a temporary directory,
//     on a free loopback port, run as the OS user postgres when the tests
//     run as root;
//  3. otherwise the test is skipped, unless GOVERNOR_REQUIRE_POSTGRES=1, in
//     which case it fails: a suite that silently skips PostgreSQL where it
//     is required is a defect.
//
// Each call creates a database with a random name and drops it when the test
// ends. A package that calls DSN runs its tests through [Main], which stops
// the throwaway server after them; a watchdog process stops it too if the
// test binary dies first.
package pgtest

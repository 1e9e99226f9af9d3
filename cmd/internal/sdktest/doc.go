// Package sdktest holds the tests of the SDK, package governor, that need
// more than the SDK's own module has: they use the SDK as a worker does,
// through its exported API only, against a governord started in the test's
// process. The SDK's module keeps to the SDK's own dependencies, so a test
// that needs a database driver or daemon internals lives here instead.
package sdktest

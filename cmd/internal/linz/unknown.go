package linz

// unknown is the type of Unknown.
type unknown struct{}

// Unknown is the output of a call whose outcome its client never learned.
// Every model accepts it and applies the call as it would have been applied.
var Unknown any = unknown{}

// isUnknown tells whether out is Unknown.
func isUnknown(out any) bool {
	_, ok := out.(unknown)
	return ok
}

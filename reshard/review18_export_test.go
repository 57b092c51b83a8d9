package reshard

// SetTestHookFenceDeleted sets (nil: clears) what Finish runs once the
// fence's markers are deleted, before it looks for processes that joined
// the migration meanwhile.
func SetTestHookFenceDeleted(f func()) { testHookFenceDeleted = f }

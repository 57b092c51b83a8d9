package reshard

// SetTestHookFenceDeleted sets (nil: clears) what Finish runs once the
// fence's markers are deleted, before it looks for processes that joined
// the migration meanwhile.
func SetTestHookFenceDeleted(f func()) { testHookFenceDeleted = f }

// SetTestHookBeforeFenceDelete sets (nil: clears) what Finish and
// ClearFence run before they delete the fence's markers.
func SetTestHookBeforeFenceDelete(f func()) { testHookBeforeFenceDelete = f }

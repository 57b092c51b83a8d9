package reshard

// SetTestHookPaused sets (nil: clears) what Move runs once a DUMP/RESTORE
// batch has paused the old node's writes, before its DUMPs.
func SetTestHookPaused(f func()) { testHookPaused = f }

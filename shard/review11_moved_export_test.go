package shard

// AfterMoved makes every client run f when a MOVED reply has installed
// its table and before the change is reported to the hooks; nil removes
// it.
func AfterMoved(f func(*Client)) {
	if f == nil {
		testHookAfterMoved.Store(nil)
		return
	}
	testHookAfterMoved.Store(&f)
}

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

// BeforeInstall makes every refresh of every client run f when it has
// read the table in use, before it compares its answer with it and
// installs it; nil removes it. f runs with the refreshes' install lock
// held: it must not wait for another refresh.
func BeforeInstall(f func(*Client)) {
	if f == nil {
		testHookBeforeInstall.Store(nil)
		return
	}
	testHookBeforeInstall.Store(&f)
}

package shard

// AfterPlanning makes every Do and Pipeline.Exec counted by a migration's
// fence run f between its planning (and its Start hook) and its
// execution, with the operation's name ("PIPELINE" for a pipeline); nil
// removes it.
func AfterPlanning(f func(c *Client, op string)) {
	if f == nil {
		testHookPlanned.Store(nil)
		return
	}
	testHookPlanned.Store(&f)
}

// BetweenOverwriteSteps makes every blind overwrite of a migration run f
// between its write at the new owner and the delete of the old copy; nil
// removes it.
func BetweenOverwriteSteps(f func(*Client)) {
	if f == nil {
		testHookOverwritten.Store(nil)
		return
	}
	testHookOverwritten.Store(&f)
}

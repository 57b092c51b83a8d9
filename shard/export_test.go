package shard

// AlwaysPipeline makes c send every pipeable single command through its
// automatic pipelines, even a caller that is alone with its node, so that
// tests can drive the pipeline with one goroutine.
func AlwaysPipeline(c *Client) { c.alwaysPipe = true }

// ResetModuleOperations forgets the module-shaped operation names passed on
// so far (MaxModuleOperations) and the cached spellings, so that a test
// that fills the bound leaves the rest of the test binary as it found it.
func ResetModuleOperations() {
	moduleMu.Lock()
	clear(moduleNames)
	moduleMu.Unlock()
	spellings.Clear()
	spellingCount.Store(0)
}

// BeforeKeepFailed makes every refresh of every client run f after it
// installed a new table and before it asks the cluster which nodes it
// still lists; nil removes it.
func BeforeKeepFailed(f func(*Client)) {
	if f == nil {
		testHookBeforeKeepFailed.Store(nil)
		return
	}
	testHookBeforeKeepFailed.Store(&f)
}

// SettleNodes is what a health tick does to the client's nodes: the nodes
// no topology in use lists retire, those listed again return.
func SettleNodes(c *Client) { c.settleNodes() }

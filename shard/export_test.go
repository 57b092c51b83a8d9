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

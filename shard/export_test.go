package shard

// AlwaysPipeline makes c send every pipeable single command through its
// automatic pipelines, even a caller that is alone with its node, so that
// tests can drive the pipeline with one goroutine.
func AlwaysPipeline(c *Client) { c.alwaysPipe = true }

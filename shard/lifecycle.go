package shard

import "sync"

// goTracked runs fn on a goroutine counted by wg (c.bg or c.inflight),
// unless the client is closing; it reports whether it started it. Close
// takes lifeMu before it waits on those groups (waitStarts), so that no
// goroutine is added to a group being waited on (a WaitGroup must not
// grow from zero while Wait runs) and none starts after the wait.
func (c *Client) goTracked(wg *sync.WaitGroup, fn func()) bool {
	c.lifeMu.RLock()
	defer c.lifeMu.RUnlock()
	if c.closed.Load() {
		return false
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		fn()
	}()
	return true
}

// waitStarts returns once no goTracked call is under way: a start that
// began before it has registered its goroutine, and a later one sees the
// client closed.
func (c *Client) waitStarts() {
	c.lifeMu.Lock()
	defer c.lifeMu.Unlock()
}

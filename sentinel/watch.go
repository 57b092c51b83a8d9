package sentinel

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
)

// SwitchMasterChannel is the Sentinel channel on which failovers are
// announced.
const SwitchMasterChannel = "+switch-master"

// watchKeepAlive is how often a subscription is PINGed; a Sentinel that
// has not answered for three of these is dropped and dialed again.
const watchKeepAlive = time.Second

// Watcher holds one +switch-master subscription per Sentinel of a set.
// Create it with Client.Watch and Close it when done.
type Watcher struct {
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	connected atomic.Int32
}

// Watch subscribes to +switch-master on every Sentinel of the set and
// calls fn, from the Watcher's goroutines, for each failover of the
// Client's master (each Sentinel announces it, so fn usually runs once per
// Sentinel for one failover: coalesce on the caller's side). A
// subscription that fails is dialed again, with a growing pause of up to
// a second, until Close.
func (c *Client) Watch(fn func(sentinel string, ev SwitchMaster)) *Watcher {
	return c.watch(c.master, fn)
}

// WatchAll is Watch for the failovers of every master set the Sentinels
// monitor, not only the Client's: several sets monitored by the same
// Sentinels can share one subscription per Sentinel.
func (c *Client) WatchAll(fn func(sentinel string, ev SwitchMaster)) *Watcher {
	return c.watch("", fn)
}

// watch subscribes on every Sentinel; master, when not empty, filters
// the messages.
func (c *Client) watch(master string, fn func(sentinel string, ev SwitchMaster)) *Watcher {
	ctx, cancel := context.WithCancel(context.Background())
	w := &Watcher{cancel: cancel}
	for _, addr := range c.Addrs() {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			c.watchOne(ctx, w, addr, master, fn)
		}()
	}
	return w
}

// Connected returns how many Sentinels the Watcher is subscribed to now.
func (w *Watcher) Connected() int { return int(w.connected.Load()) }

// Close ends every subscription and waits for the Watcher's goroutines.
// Calling it again does nothing.
func (w *Watcher) Close() {
	w.cancel()
	w.wg.Wait()
}

// watchOne keeps one Sentinel's subscription up until ctx ends.
func (c *Client) watchOne(ctx context.Context, w *Watcher, addr, master string, fn func(string, SwitchMaster)) {
	pause := 50 * time.Millisecond
	for ctx.Err() == nil {
		start := time.Now()
		c.subscribe(ctx, w, addr, master, fn)
		if time.Since(start) > 5*time.Second {
			pause = 50 * time.Millisecond
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		pause = min(2*pause, time.Second)
	}
}

// subscribe runs one subscription until it fails or ctx ends.
func (c *Client) subscribe(ctx context.Context, w *Watcher, addr, master string, fn func(string, SwitchMaster)) {
	conn, nc, err := c.Dial(ctx, addr)
	if err != nil {
		return
	}
	// Closing the socket is the one way to stop a blocked Receive.
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	defer stop()
	defer conn.Close()
	psc := redis.PubSubConn{Conn: conn}
	if err := psc.Subscribe(SwitchMasterChannel); err != nil {
		return
	}
	// The pinger writes while this goroutine reads, which redigo allows
	// (one reader and one writer at a time).
	pingCtx, stopPing := context.WithCancel(ctx)
	var pinger sync.WaitGroup
	pinger.Add(1)
	go func() {
		defer pinger.Done()
		t := time.NewTicker(watchKeepAlive)
		defer t.Stop()
		for {
			select {
			case <-pingCtx.Done():
				return
			case <-t.C:
				if psc.Ping("") != nil {
					nc.Close()
					return
				}
			}
		}
	}()
	defer pinger.Wait()
	defer stopPing()
	subscribed := false
	defer func() {
		if subscribed {
			w.connected.Add(-1)
		}
	}()
	for {
		switch v := psc.ReceiveWithTimeout(3 * watchKeepAlive).(type) {
		case error:
			nc.Close()
			return
		case redis.Subscription:
			if v.Kind == "subscribe" && !subscribed {
				subscribed = true
				w.connected.Add(1)
			}
		case redis.Message:
			ev, err := ParseSwitchMaster(string(v.Data))
			if err == nil && (master == "" || ev.Master == master) {
				fn(addr, ev)
			}
		}
	}
}

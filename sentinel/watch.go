package sentinel

import (
	"context"
	"errors"
	"fmt"
	"slices"
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

	mu   sync.Mutex
	errs map[string]error // Sentinel -> why it is not subscribed now
}

// Watch subscribes to +switch-master on every Sentinel of the set and
// calls fn, from the Watcher's goroutines, for each failover of the
// Client's master (each Sentinel announces it, so fn usually runs once per
// Sentinel for one failover: coalesce on the caller's side). A
// subscription that fails is dialed again, with a growing pause of up to
// a second, until Close.
func (c *Client) Watch(fn func(sentinel string, ev SwitchMaster)) *Watcher {
	return c.watch(c.master, WatchHandlers{Switch: fn})
}

// WatchAll is Watch for the failovers of every master set the Sentinels
// monitor, not only the Client's: several sets monitored by the same
// Sentinels can share one subscription per Sentinel.
func (c *Client) WatchAll(fn func(sentinel string, ev SwitchMaster)) *Watcher {
	return c.watch("", WatchHandlers{Switch: fn})
}

// WatchHandlers are the functions a Watcher calls, from its goroutines.
type WatchHandlers struct {
	// Switch, when not nil, is called for each +switch-master message
	// about a watched master set.
	Switch func(sentinel string, ev SwitchMaster)
	// Resubscribed, when not nil, is called each time the subscription to
	// a Sentinel is up again after it was lost (or after the first
	// attempt to make it failed). The +switch-master messages that
	// Sentinel published meanwhile were missed: the caller should ask the
	// Sentinels for the master again rather than wait for the next
	// failover's message.
	Resubscribed func(sentinel string)
}

// WatchAllWith is WatchAll with the handlers h, which also say when a
// subscription came back after a loss.
func (c *Client) WatchAllWith(h WatchHandlers) *Watcher {
	return c.watch("", h)
}

// watch subscribes on every Sentinel; master, when not empty, filters
// the messages.
func (c *Client) watch(master string, h WatchHandlers) *Watcher {
	ctx, cancel := context.WithCancel(context.Background())
	w := &Watcher{cancel: cancel}
	for _, addr := range c.Addrs() {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			c.watchOne(ctx, w, addr, master, h)
		}()
	}
	return w
}

// Connected returns how many Sentinels the Watcher is subscribed to now.
func (w *Watcher) Connected() int { return int(w.connected.Load()) }

// Err reports why the Watcher is not subscribed to some of the Sentinels
// now: the last failure of each of them (a *QueryError: a refused dial or
// login, a SUBSCRIBE the Sentinel refused, such as NOPERM for an ACL user
// without the channel, a subscription that broke), joined, in the order
// of the Sentinels' addresses. It is nil while every Sentinel is
// subscribed, or before any attempt failed. It never holds a password.
func (w *Watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.errs) == 0 {
		return nil
	}
	addrs := make([]string, 0, len(w.errs))
	for a := range w.errs {
		addrs = append(addrs, a)
	}
	slices.Sort(addrs)
	errs := make([]error, len(addrs))
	for i, a := range addrs {
		errs[i] = w.errs[a]
	}
	return errors.Join(errs...)
}

// failed records why the subscription to addr is not up (nil: it is).
func (w *Watcher) failed(addr string, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err == nil {
		delete(w.errs, addr)
		return
	}
	if w.errs == nil {
		w.errs = map[string]error{}
	}
	var qe *QueryError
	if !errors.As(err, &qe) {
		err = &QueryError{Addr: addr, Err: err}
	}
	w.errs[addr] = err
}

// Close ends every subscription and waits for the Watcher's goroutines.
// Calling it again does nothing.
func (w *Watcher) Close() {
	w.cancel()
	w.wg.Wait()
}

// watchOne keeps one Sentinel's subscription up until ctx ends.
func (c *Client) watchOne(ctx context.Context, w *Watcher, addr, master string, h WatchHandlers) {
	pause := 50 * time.Millisecond
	for lost := false; ctx.Err() == nil; lost = true {
		start := time.Now()
		if err := c.subscribe(ctx, w, addr, master, h, lost); ctx.Err() == nil {
			w.failed(addr, err)
		}
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

// subscribe runs one subscription until it fails or ctx ends, and
// returns why it ended; lost says that an earlier one was lost or failed
// (h.Resubscribed is then called once this one is up).
func (c *Client) subscribe(ctx context.Context, w *Watcher, addr, master string, h WatchHandlers, lost bool) error {
	conn, nc, err := c.Dial(ctx, addr)
	if err != nil {
		return err
	}
	// Closing the socket is the one way to stop a blocked Receive.
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	defer stop()
	defer conn.Close()
	psc := redis.PubSubConn{Conn: conn}
	if err := psc.Subscribe(SwitchMasterChannel); err != nil {
		return fmt.Errorf("SUBSCRIBE %s: %w", SwitchMasterChannel, err)
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
			if !subscribed {
				// An error reply here is the refusal of SUBSCRIBE.
				return fmt.Errorf("SUBSCRIBE %s: %w", SwitchMasterChannel, v)
			}
			return fmt.Errorf("subscription to %s lost: %w", SwitchMasterChannel, v)
		case redis.Subscription:
			if v.Kind == "subscribe" && !subscribed {
				subscribed = true
				w.connected.Add(1)
				w.failed(addr, nil)
				if lost && h.Resubscribed != nil {
					h.Resubscribed(addr)
				}
			}
		case redis.Message:
			ev, err := ParseSwitchMaster(string(v.Data))
			if err == nil && (master == "" || ev.Master == master) && h.Switch != nil {
				h.Switch(addr, ev)
			}
		}
	}
}

package shard

import (
	"context"
	"fmt"
	"time"

	"github.com/shardis/shardis/internal/errtext"
)

// request asks the shard's loop for a query (coalesced: requests made
// while one is pending are one) and returns a channel closed when the
// next query ends.
func (sh *sentShard) request() <-chan struct{} {
	sh.mu.Lock()
	ch := sh.round
	sh.mu.Unlock()
	select {
	case sh.kick <- struct{}{}:
	default:
	}
	return ch
}

// refreshSentinels asks every Sentinel shard for a query now and waits
// for each to end (Refresh): the error joins the errors of the shards
// whose query named no confirmed master (Unwrap() []error returns them),
// under a heading that says how many of the shards they are.
func (c *Client) refreshSentinels(ctx context.Context) error {
	if c.closed.Load() {
		return ErrClosed
	}
	rounds := make([]<-chan struct{}, len(c.sent.shards))
	for i, sh := range c.sent.shards {
		rounds[i] = sh.request()
	}
	var errs []error
	for i, sh := range c.sent.shards {
		select {
		case <-rounds[i]:
		case <-ctx.Done():
			return fmt.Errorf("shardis: refresh of the Sentinel shards: %w", ctx.Err())
		case <-c.stop:
			return ErrClosed
		}
		if p := sh.queryErr.Load(); p != nil {
			errs = append(errs, *p)
		}
	}
	return errtext.Join(fmt.Sprintf("shardis: Refresh: %d of %d Sentinel shards named no confirmed master", len(errs), len(c.sent.shards)), errs...)
}

// sentinelLoop runs a shard's queries until Close: when asked (at most one
// per MinRefreshInterval) and every RefreshInterval.
func (c *Client) sentinelLoop(sh *sentShard) {
	defer c.bg.Done()
	o := c.sent.opts
	var tick <-chan time.Time
	if o.RefreshInterval > 0 {
		t := time.NewTicker(o.RefreshInterval)
		defer t.Stop()
		tick = t.C
	}
	// ctx ends queries in flight when the client closes.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-c.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	last := time.Now()
	for {
		select {
		case <-c.stop:
			return
		case <-tick:
		case <-sh.kick:
		case <-sh.urgent:
		}
		if wait := o.MinRefreshInterval - time.Since(last); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-c.stop:
				t.Stop()
				return
			case <-t.C:
			case <-sh.urgent:
				t.Stop()
			}
		}
		select {
		case <-sh.urgent:
		default:
		}
		// Requests that came while waiting are served by this query.
		select {
		case <-sh.kick:
		default:
		}
		last = time.Now()
		sh.mu.Lock()
		done := sh.round
		sh.round = make(chan struct{})
		sh.mu.Unlock()
		qctx, qcancel := context.WithTimeout(ctx, c.queryBound(sh))
		_ = c.query(qctx, sh)
		qcancel()
		close(done)
	}
}

// queryBound bounds one whole background query of shard sh. Each step is
// bounded by its own timeouts: a Sentinel's ask (dial, then read) by the
// Sentinels' Timeout, a check of a data node (roleOf: ROLE; INFO for its
// run_id) by the data nodes' dial and read timeouts. The query asks the
// Sentinels (all in parallel, the config epochs, the replicas one
// Sentinel after another) and checks a data node up to once per Sentinel
// (each answer in turn), then up to three times more (installFound: the
// current master's run_id and ROLE; the replicas, in parallel; or, with
// no answer, followRole's two). Taking the bound from the Sentinels'
// timeout alone cut short a check that the data nodes' longer timeouts
// allow, from a master slow to answer but well: the shard then kept a
// master it should have left, or was marked stale. A comparison of two
// spellings of a server may wait a dial timeout for the lookup of a host
// name: installFound makes up to three, two of them at once, the listing
// of the replicas one round (listedReplicas: in parallel), and their
// check one more after its ROLE (replicaMatch). Left out, they ran the
// bound out before the replicas' ROLE checks on a slow resolver, and
// replicas in sync stopped serving reads until the next query.
func (c *Client) queryBound(sh *sentShard) time.Duration {
	n := time.Duration(len(sh.cfg.Addrs))
	per := c.sent.opts.clientOptions(sh.cfg).ReadTimeout
	sentinels := 2 * per * (n + 2)
	data := (c.dialTimeout()+c.readTimeout)*(n+3) + c.dialTimeout()*5
	return sentinels + data
}

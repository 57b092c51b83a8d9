package shard

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shardis/shardis/internal/addrkey"
	"github.com/shardis/shardis/sentinel"
)

// watchSentinels subscribes to +switch-master for every Sentinel shard.
// Shards that name the same Sentinels with the same credentials share
// one subscription per Sentinel, which hands each message to the shards
// of its master set. The subscriptions end when the client closes.
func (c *Client) watchSentinels() {
	type group struct {
		cli    *sentinel.Client
		shards map[string][]*sentShard // by master set name
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, sh := range c.sent.shards {
		k := watchKey(sh.cfg)
		g := byKey[k]
		if g == nil {
			g = &group{cli: sh.cli, shards: map[string][]*sentShard{}}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.shards[sh.cfg.master()] = append(g.shards[sh.cfg.master()], sh)
	}
	var watchers []*sentinel.Watcher
	for _, g := range groups {
		w := g.cli.WatchAllWith(sentinel.WatchHandlers{
			Switch: func(_ string, ev sentinel.SwitchMaster) {
				for _, sh := range g.shards[ev.Master] {
					c.switched(sh, ev)
				}
			},
			// A subscription that was down may have missed a failover:
			// the Sentinels are asked again.
			Resubscribed: func(string) {
				for _, list := range g.shards {
					for _, sh := range list {
						sh.request()
					}
				}
			},
		})
		for _, list := range g.shards {
			for _, sh := range list {
				sh.watcher = w
			}
		}
		watchers = append(watchers, w)
	}
	c.bg.Add(1)
	go func() {
		defer c.bg.Done()
		<-c.stop
		for _, w := range watchers {
			w.Close()
		}
	}()
}

// watchKey identifies the Sentinels a shard asks and how it logs in to
// them. The password enters only as a SHA-256 digest, and the key lives
// only while the subscriptions are set up.
func watchKey(s SentinelShard) string {
	addrs := slices.Clone(s.Addrs)
	slices.Sort(addrs)
	sum := sha256.Sum256([]byte(s.Password))
	return fmt.Sprintf("%s|%s|%x|%p", strings.Join(addrs, ","), s.Username, sum, s.TLSConfig)
}

// switched handles a +switch-master for the shard's master set, on the
// subscription's goroutine: the announced master is checked with ROLE
// and installed at once (the other Sentinels may name the old master for
// a second or two, and the query loop may be busy or pausing), then a
// full query is asked for at once, to refresh the replicas and the
// shard's state. A few messages come per failover, one per Sentinel.
//
// A message may name the master in use under another spelling (a
// Sentinel that announces host names, and one that does not). When a
// lookup cannot tell whether it does (addrkey.Unknown: the resolver
// failed, or is slow), the master in use is kept with its pools when it
// is the announced master (the same run_id: sameRunningServer), as
// installFound keeps it, and the query that follows compares again. The
// message still counts as a switch for the queries in flight and for the
// master it replaced. Any other master in use is replaced, even one that
// still says it is the master: right after a failover the old master
// (or one failed over from before, whose switch was missed) may say so.
//
// An announced master that refuses the client's credentials (the
// account was never made there, or its password differs) is installed
// too, though ROLE could not confirm it: kept, the old master took the
// writes for as long as the Sentinels could not make it a replica, and
// lost them all when they did. Installed, each command fails at once
// with the authentication error (pool.ErrAuth), which is the cause, and
// nothing is written anywhere; a query that finds a master ROLE
// confirms replaces it (installFound does not keep a current master
// that fails its check).
func (c *Client) switched(sh *sentShard, ev sentinel.SwitchMaster) {
	sh.switches.Add(1)
	// c.life: Close cuts the check short (the Watcher's Close waits for
	// this goroutine).
	ctx, cancel := context.WithTimeout(c.life, c.dialTimeout()+c.readTimeout)
	defer cancel()
	if err := c.checkMaster(ctx, ev.NewAddr); err == nil || isAuthFailure(err) {
		addr := ev.NewAddr
		keep := false
		known, knownMatch := "", addrkey.Different
		if cur := sh.master.Load(); cur != nil {
			known, knownMatch = *cur, c.compareServers(ctx, *cur, addr)
			keep = knownMatch == addrkey.Unknown && c.sameRunningServer(ctx, sh, addr)
		}
		sh.instMu.Lock()
		var old *string
		if keep {
			addr = *sh.master.Load()
		} else {
			old = sh.master.Swap(&addr)
		}
		sh.switchInstall++
		if ev.OldAddr != "" && !sameServer(ev.OldAddr, addr) {
			// Even when a query installed the new master first.
			sh.switchedFrom, sh.switchedAt = ev.OldAddr, time.Now()
		}
		sh.instMu.Unlock()
		if !keep {
			c.installed(sh, old, addr, known, knownMatch)
		}
	}
	select {
	case sh.urgent <- struct{}{}:
	default:
	}
	sh.request()
}

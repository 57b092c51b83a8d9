package shard

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/sentinel"
)

// sentinels is a ring client's Sentinel side: one sentShard per ring
// shard behind Sentinel.
type sentinels struct {
	opts     SentinelOptions // defaults filled in
	shards   []*sentShard
	byMaster []*sentShard // configured node index -> its Sentinel shard, nil for plain shards
	readers  bool         // ReadFrom is a replica policy

	failovers atomic.Int64

	mu        sync.Mutex
	listeners []func(failoverEvent) // see onFailover
}

// sentShard is the state of one Sentinel shard.
type sentShard struct {
	cfg  SentinelShard // defaults filled in
	key  string        // pool key and node address
	node int           // node index (= configured ring index)
	cli  *sentinel.Client

	master   atomic.Pointer[string]  // the verified master's address
	replicas atomic.Pointer[[]int32] // node indexes of healthy replicas
	repAddrs atomic.Pointer[[]string]
	// repMu orders dropReplica and loadReplicas' install of a new list;
	// repDrops counts the drops, so that a query that began before one
	// does not bring back the replica just dropped.
	repMu    sync.Mutex
	repDrops uint64
	// repSeen holds, for each replica of replicas that a query checked,
	// its node's failure count (nodeState.errors) then: a replica that
	// failed since (a health check, a command) may have restarted empty,
	// and serves no read until a query checks it again.
	repSeen atomic.Pointer[map[int32]int64]

	failovers atomic.Int64
	queries   atomic.Int64
	stale     atomic.Bool // the last query failed: serving the last known master
	lastErr   atomic.Pointer[string]
	queryErr  atomic.Pointer[error] // the last query's error, nil when it found a master
	switches  atomic.Int64          // +switch-master messages seen
	watcher   *sentinel.Watcher

	kick chan struct{} // asks the shard's loop for a query
	// urgent asks for a query at once, without the MinRefreshInterval
	// pause: a +switch-master named a new master (a few messages per
	// failover, one per Sentinel).
	urgent chan struct{}
	mu     sync.Mutex
	round  chan struct{} // closed when the next query ends

	// instMu orders the two ways a master is installed: a query, and a
	// +switch-master message (switched). switches counts the latter's
	// installs, so that a query that began before one does not install
	// the master it found then, which may be the one just failed over
	// from.
	instMu        sync.Mutex
	switchInstall uint64
	// switchedFrom is the master the last +switch-master replaced, at
	// switchedAt (see switchBackGuard).
	switchedFrom string
	switchedAt   time.Time
	// queryHook, in tests only, runs after a query has verified a master
	// and before it installs it.
	queryHook atomic.Pointer[func(addr string)]
}

// failoverEvent is the internal notice of a master change, for the
// listeners of onFailover; the NodeState hook gets it through the node's
// event queue (queueSentinelPromoted).
type failoverEvent struct {
	Shard     string
	MasterSet string
	Node      int // the shard's node index
	From, To  string
	At        time.Time
}

// onFailover registers fn to be called after every master change that
// the client installs, on the goroutine that installed it.
func (s *sentinels) onFailover(fn func(failoverEvent)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listeners = append(s.listeners, fn)
}

func (s *sentinels) notify(ev failoverEvent) {
	s.mu.Lock()
	ls := append([]func(failoverEvent){}, s.listeners...)
	s.mu.Unlock()
	for _, fn := range ls {
		fn(ev)
	}
}

// newRing builds the ring router, on the ring cfg's validation built when
// there is one (built, of cfg.RingConfig()); Sentinel shards' nodes get
// their pool key as address.
func (c *Client) newRing(cfg Config, built *ring.Ring) (*RingRouter, error) {
	var rr *RingRouter
	if built != nil {
		rr = ringRouterOf(built)
	} else {
		var err error
		if rr, err = NewRingRouter(cfg.RingConfig()); err != nil {
			return nil, err
		}
	}
	for i, s := range cfg.Shards {
		if s.Addr == "" && len(cfg.Sentinel.Shards) > 0 {
			rr.nodes[i].Addr = sentinelKey(s.Name)
		}
	}
	return rr, nil
}

// startSentinels finds the master of every Sentinel shard (in parallel,
// each checked with ROLE) and starts following failovers. It fails when
// a shard's master cannot be found.
func (c *Client) startSentinels(ctx context.Context) error {
	cfg := c.cfg
	if len(cfg.Sentinel.Shards) == 0 {
		return nil
	}
	o := cfg.Sentinel.withDefaults()
	st := &sentinels{opts: o, byMaster: make([]*sentShard, len(cfg.Shards)), readers: o.ReadFrom != ReadMaster}
	byName := map[string]SentinelShard{}
	for _, s := range o.Shards {
		byName[s.Name] = o.resolved(s)
	}
	for i, s := range cfg.Shards {
		if s.Addr != "" {
			continue
		}
		sc := byName[s.Name]
		cli, err := sentinel.New(sc.master(), sc.Addrs, o.clientOptions(sc))
		if err != nil {
			return badConfigf("Sentinel shard %q: %w", s.Name, err)
		}
		sh := &sentShard{cfg: sc, key: sentinelKey(s.Name), node: i, cli: cli, kick: make(chan struct{}, 1), urgent: make(chan struct{}, 1), round: make(chan struct{})}
		if err := c.pools.SetResolver(sh.key, sh.resolve); err != nil {
			return errtext.Errorf("shardis: Sentinel shard %q: %w", s.Name, err)
		}
		st.shards = append(st.shards, sh)
		st.byMaster[i] = sh
	}
	c.sent = st
	errs := make([]error, len(st.shards))
	var wg sync.WaitGroup
	for i, sh := range st.shards {
		wg.Go(func() { errs[i] = c.query(ctx, sh) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return errtext.Errorf("shardis: Sentinel discovery: %w", err)
	}
	if err := st.sameServer(cfg.Shards); err != nil {
		return err
	}
	c.watchSentinels()
	for _, sh := range st.shards {
		c.bg.Add(1)
		go c.sentinelLoop(sh)
	}
	return nil
}

// resolve is the pool resolver of the shard's key: the verified master.
func (sh *sentShard) resolve() (string, error) {
	if p := sh.master.Load(); p != nil {
		return *p, nil
	}
	return "", fmt.Errorf("%w: Sentinel shard %s has no verified master yet", pool.ErrNoAddr, sh.cfg.Name)
}

// currentMaster returns the shard's verified master, if there is one.
func (sh *sentShard) currentMaster() (string, bool) {
	if p := sh.master.Load(); p != nil {
		return *p, true
	}
	return "", false
}

// sentinelShardOf returns the Sentinel shard whose master node is n (a
// ring node addressed by the shard's key); nil for any other node.
func (c *Client) sentinelShardOf(n Node) *sentShard {
	if c.sent == nil {
		return nil
	}
	i, ok := c.nodes.lookup(n.Addr)
	if !ok {
		return nil
	}
	return c.sent.masterOf(i)
}

// sameServer refuses, once every Sentinel shard's master is found, a ring
// in which two shards are the same server: a plain shard listed at a
// Sentinel shard's master, or two Sentinel shards (under master names of
// their own) whose Sentinels name the same master. As for a plain ring
// that lists one server twice, the keys of both shards would be on that
// server.
func (s *sentinels) sameServer(shards []ring.Shard) error {
	byKey := map[string]string{} // server key -> what it is
	add := func(addr, what string) error {
		for _, k := range serverKeys(addr) {
			if prev, dup := byKey[k]; dup {
				return &configError{cause: ring.ErrDuplicateShard, msg: fmt.Sprintf("%s and %s are the same server", prev, what)}
			}
		}
		for _, k := range serverKeys(addr) {
			byKey[k] = what
		}
		return nil
	}
	for i, sh := range shards {
		if sh.Addr != "" {
			if err := add(sh.Addr, fmt.Sprintf("shard %d (%s)", i, sh.Addr)); err != nil {
				return err
			}
		}
	}
	for _, sh := range s.shards {
		if p := sh.master.Load(); p != nil {
			if err := add(*p, fmt.Sprintf("the master %s of Sentinel shard %q", *p, sh.cfg.Name)); err != nil {
				return err
			}
		}
	}
	return nil
}

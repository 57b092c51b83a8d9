package shard

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/sentinel"
)

// sentinels is a ring client's Sentinel side: one sentShard per ring
// shard behind Sentinel.
type sentinels struct {
	opts     SentinelOptions // defaults filled in
	shards   []*sentShard
	byMaster []*sentShard // configured node index -> its Sentinel shard, nil for plain shards
	readers  bool         // ReadFrom is a replica policy
	owners   sync.Map     // node index of a replica -> *sentShard

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

	failovers atomic.Int64
	queries   atomic.Int64
	stale     atomic.Bool // the last query failed: serving the last known master
	lastErr   atomic.Pointer[string]
	switches  atomic.Int64           // +switch-master messages seen
	hint      atomic.Pointer[string] // the new master a +switch-master named, to check first
	watcher   *sentinel.Watcher

	kick chan struct{} // asks the shard's loop for a query
	// urgent asks for a query at once, without the MinRefreshInterval
	// pause: a +switch-master named a new master (a few messages per
	// failover, one per Sentinel).
	urgent chan struct{}
	mu     sync.Mutex
	round  chan struct{} // closed when the next query ends
}

// failoverEvent is the internal notice of a master change, for stats and
// for the public node-state callbacks to connect to.
type failoverEvent struct {
	Shard     string
	MasterSet string
	From, To  string
	At        time.Time
}

// onFailover registers fn to be called (from the shard's refresh loop)
// after every master change that the client installs.
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

// newRing builds the ring router; Sentinel shards' nodes get their pool
// key as address.
func (c *Client) newRing(cfg Config) (*RingRouter, error) {
	rr, err := NewRingRouter(cfg.RingConfig())
	if err != nil {
		return nil, err
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
			return fmt.Errorf("%w: Sentinel shard %q: %w", ErrBadConfig, s.Name, err)
		}
		sh := &sentShard{cfg: sc, key: sentinelKey(s.Name), node: i, cli: cli, kick: make(chan struct{}, 1), urgent: make(chan struct{}, 1), round: make(chan struct{})}
		if err := c.pools.SetResolver(sh.key, sh.resolve); err != nil {
			return fmt.Errorf("shardis: Sentinel shard %q: %w", s.Name, err)
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
		return fmt.Errorf("shardis: Sentinel discovery: %w", err)
	}
	for _, sh := range st.shards {
		sh.watcher = sh.cli.Watch(func(_ string, ev sentinel.SwitchMaster) {
			sh.switches.Add(1)
			addr := ev.NewAddr
			sh.hint.Store(&addr)
			select {
			case sh.urgent <- struct{}{}:
			default:
			}
			sh.request()
		})
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

// sentinelLoop runs a shard's queries until Close: when asked (at most one
// per MinRefreshInterval) and every RefreshInterval.
func (c *Client) sentinelLoop(sh *sentShard) {
	defer c.bg.Done()
	defer sh.watcher.Close()
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
		if wait := o.MinRefreshInterval - time.Since(last); wait > 0 && sh.hint.Load() == nil {
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
		// Each Sentinel is bounded by its own timeouts; this bounds the
		// whole query (every Sentinel, ROLE, replicas).
		per := c.sent.opts.clientOptions(sh.cfg).ReadTimeout
		qctx, qcancel := context.WithTimeout(ctx, 2*per*time.Duration(len(sh.cfg.Addrs)+2))
		_ = c.query(qctx, sh)
		qcancel()
		close(done)
	}
}

// query asks the Sentinels for the shard's master, checks it with ROLE,
// installs it, and lists the replicas when they serve reads. When no
// Sentinel answers, the last known master keeps serving (the shard is
// then marked stale in Stats); if that master says it has become a
// replica, its own master is checked and taken instead.
func (c *Client) query(ctx context.Context, sh *sentShard) error {
	sh.queries.Add(1)
	var addr string
	var err error
	if h := sh.hint.Swap(nil); h != nil && c.checkMaster(ctx, *h) == nil {
		// The Sentinel that announced the switch named it, and ROLE
		// agrees: no need to wait for the other Sentinels to catch up.
		addr = *h
	} else {
		addr, _, err = sh.cli.VerifiedMasterAddr(ctx, c.checkMaster)
	}
	if err != nil {
		// No Sentinel named a confirmed master: keep serving the last
		// known one, and say so in Stats. If it says it has become a
		// replica of another server that ROLE confirms, follow it there.
		msg := err.Error()
		sh.lastErr.Store(&msg)
		sh.stale.Store(true)
		cur := sh.master.Load()
		if cur == nil {
			return fmt.Errorf("shardis: Sentinel shard %s: %w", sh.cfg.Name, err)
		}
		if next, rerr := c.followRole(ctx, *cur); rerr == nil && next != *cur {
			c.install(sh, next)
		}
		return fmt.Errorf("shardis: Sentinel shard %s: %w", sh.cfg.Name, err)
	}
	sh.stale.Store(false)
	sh.lastErr.Store(nil)
	c.install(sh, addr)
	c.loadReplicas(ctx, sh, addr)
	return nil
}

// checkMaster verifies with ROLE that addr is a master.
func (c *Client) checkMaster(ctx context.Context, addr string) error {
	role, err := c.roleOf(ctx, addr)
	if err != nil {
		return err
	}
	if role.Kind != sentinel.RoleMaster {
		return fmt.Errorf("%w: %s says it is a %s", sentinel.ErrNotMaster, addr, role.Kind)
	}
	return nil
}

// followRole returns the master that addr replicates from, checked with
// ROLE, when addr says it is a replica; addr itself when it is a master.
func (c *Client) followRole(ctx context.Context, addr string) (string, error) {
	role, err := c.roleOf(ctx, addr)
	if err != nil {
		return "", err
	}
	switch role.Kind {
	case sentinel.RoleMaster:
		return addr, nil
	case sentinel.RoleReplica:
		if err := c.checkMaster(ctx, role.MasterAddr); err != nil {
			return "", err
		}
		return role.MasterAddr, nil
	}
	return "", fmt.Errorf("%w: %s says it is a %s", sentinel.ErrNotMaster, addr, role.Kind)
}

// roleOf asks the data node at addr for its ROLE, with the data nodes'
// credentials.
func (c *Client) roleOf(ctx context.Context, addr string) (sentinel.Role, error) {
	ctx, cancel := context.WithTimeout(ctx, c.dialTimeout()+c.readTimeout)
	defer cancel()
	conn, err := c.pools.Get(ctx, addr)
	if err != nil {
		return sentinel.Role{}, err
	}
	defer conn.Close()
	return sentinel.CheckRole(ctx, conn)
}

// install makes addr the shard's master. On a change the pools of the
// shard start over (connections to the old master close as they come
// back), the node counts as up again, and the failover is counted.
func (c *Client) install(sh *sentShard, addr string) {
	old := sh.master.Swap(&addr)
	if old == nil || *old == addr {
		return
	}
	_ = c.pools.Remove(sh.key)
	c.noteSuccess(sh.node)
	sh.failovers.Add(1)
	c.sent.failovers.Add(1)
	c.sent.notify(failoverEvent{Shard: sh.cfg.Name, MasterSet: sh.cfg.master(), From: *old, To: addr, At: time.Now()})
}

// loadReplicas lists the shard's healthy replicas of master (for Stats)
// and, when replicas serve reads, registers them as nodes.
func (c *Client) loadReplicas(ctx context.Context, sh *sentShard, master string) {
	reps, err := sh.cli.Replicas(ctx)
	if err != nil {
		return // keep the last list
	}
	var idx []int32
	var addrs []string
	for _, r := range reps {
		if !r.Healthy() || r.Addr == master || (r.MasterAddr != "" && r.MasterAddr != master) {
			continue
		}
		addrs = append(addrs, r.Addr)
		if c.sent.readers {
			i := c.nodes.add(Node{Name: sh.cfg.Name + " replica " + r.Addr, Addr: r.Addr})
			c.sent.owners.Store(i, sh)
			idx = append(idx, int32(i))
		}
	}
	sh.replicas.Store(&idx)
	sh.repAddrs.Store(&addrs)
}

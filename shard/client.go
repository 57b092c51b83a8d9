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
	"github.com/shardis/shardis/shard/command"
)

// Client sends commands to the node that serves their keys. It is safe for
// concurrent use. Create one with New and share it; Close it when done.
type Client struct {
	// cfg is a pointer so that fmt, printing a value that holds the
	// Client with a verb other than %v (a *Pipeline with %s, say, whose
	// unexported field it cannot ask for String), shows an address, not
	// the configuration and its passwords.
	cfg         *Config
	pools       *pool.Set
	nodes       *nodeTable
	loc         locator
	router      Router
	ring        *RingRouter // ring mode only
	readTimeout time.Duration
	health      HealthOptions

	// Cluster mode: set by New, or at run time when a migration into a
	// cluster is fenced (migrate_cluster.go); clus is nil otherwise. Load
	// them with cl() and clusterOpts().
	clus         atomic.Pointer[ClusterRouter]
	copts        atomic.Pointer[ClusterOptions]
	readReplicas atomic.Bool
	refr         refresher
	refreshing   atomic.Bool // the refresh loop was started
	switching    clusterSwitch
	refreshTicks atomic.Int32 // health ticks that should also refresh the topology
	downTicks    int          // health ticks since a refresh while a node is down (health loop only)
	downBackoff  downBackoff  // how often refreshWhileDown refreshes (health loop only)

	learned learnedCommands // commands learned from the servers (learn.go)
	obs     *observer       // Config.Hooks; nil without hooks
	subs    subscriptions   // open subscriptions (subscription_registry.go)
	lifeMu  sync.RWMutex    // goroutines started at run time vs Close (lifecycle.go)
	sent    *sentinels      // ring mode with Sentinel shards only

	// noGetParts is set once a server refused a split MGET's one-key
	// part sent as GET (an ACL without GET, GET renamed away): such
	// parts go as one-key MGETs from then on (plan.go).
	noGetParts atomic.Bool

	autoPipe   bool
	autoPipes  autoPipes
	alwaysPipe bool // tests: lone callers use the pipeline too

	// Placement that a migration can change (migrate.go).
	topo     atomic.Pointer[topology] // ring and router clients
	mig      atomic.Pointer[migState] // nil unless migrating
	outCut   atomic.Pointer[fenceCut] // cuts blocking commands planned outside a migration (migrate_plan.go)
	migMu    *sync.Mutex
	instance string // names the connections (migrate_name.go)
	// With AutoClientName: the connections' names follow the topology
	// the client routes by (renameConns). baseID is TopologyID of the
	// Config of New; connNames counts the renames, for the automatic
	// pipelines to drop a connection dialed before one.
	autoName  bool
	baseID    string
	nameMu    sync.Mutex
	connNames atomic.Int64

	closed   atomic.Bool
	closing  chan struct{}     // closed once the first Close has closed everything
	closeErr error             // the first Close's, set before closing is closed
	onPanic  func(*PanicError) // Hooks.Panic (callback.go)
	// callbacks counts the program's code running now (callback.go).
	callbacks atomic.Int64
	stop      chan struct{}
	life      context.Context // ends with Close: bounds background waits
	endLife   context.CancelFunc
	bg        sync.WaitGroup // background loops
	inflight  sync.WaitGroup // per-node workers of parallel batches

	// poolStatsMu orders Stats' reading of the pools with a Sentinel
	// shard's pools starting over (installed), whose counters go on in
	// nodeLife.poolBase.
	poolStatsMu sync.RWMutex
}

// New creates a client for cfg. Ring mode does no I/O here: connections are
// made on first use.
func New(ctx context.Context, cfg Config) (*Client, error) {
	if err := checkContext(ctx); err != nil {
		return nil, err
	}
	built, err := cfg.validate() // the ring it checked, kept for newRing
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("shardis: %w", err)
	}
	ids, err := topologyIDs(cfg) // a Router's code runs here: its panic is an error
	if err != nil {
		return nil, err
	}
	c := &Client{cfg: &cfg, nodes: newNodeTable(), stop: make(chan struct{}), closing: make(chan struct{}), health: cfg.Health.withDefaults(), autoPipe: !cfg.DisableAutoPipeline}
	c.life, c.endLife = context.WithCancel(context.Background())
	c.instance = newInstanceID()
	if cfg.Pool.ClientName == AutoClientName {
		c.autoName, c.baseID = true, ids.id
		cfg.Pool.ClientName = ClientName{Instance: c.instance, Topology: initialRoutingID(cfg, ids)}.String()
	}
	c.readTimeout = cfg.Pool.ReadTimeout
	if c.readTimeout == 0 {
		c.readTimeout = pool.DefaultReadTimeout
	}
	if cfg.Hooks != nil {
		c.onPanic = cfg.Hooks.Panic
	}
	obs, onDial := newObserver(c, cfg.Hooks)
	c.obs = obs
	pools, err := pool.NewSetWithDialHook(cfg.Pool, onDial)
	if err != nil {
		return nil, errtext.Errorf("%w: %w", ErrBadConfig, err)
	}
	c.pools = pools
	switch cfg.Mode {
	case ModeCluster:
		opts := cfg.Cluster.withDefaults()
		c.copts.Store(&opts)
		c.readReplicas.Store(opts.ReadFrom != ReadMaster)
		r := newClusterRouter(c.nodes, cfg.Seeds)
		r.opts = &opts
		c.clus.Store(r)
		c.router, c.loc = r, clusterLocator{r}
		if err := c.discoverSeeds(ctx); err != nil {
			c.endLife()
			c.pools.Close()
			return nil, err
		}
		c.startRefreshLoop()
	default:
		if cfg.Router != nil {
			// Guarded: a panic of the program's Router is contained
			// (callback.go).
			g := &guardedRouter{c: c, r: cfg.Router}
			if err := g.load(); err != nil {
				c.endLife()
				c.pools.Close()
				return nil, err
			}
			c.router, c.loc = g, newRouterLocator(g, c.nodes)
			break
		}
		rr, err := c.newRing(cfg, built.ring)
		if err != nil {
			c.endLife()
			c.pools.Close()
			return nil, errtext.Errorf("%w: %w", ErrBadConfig, err)
		}
		for _, n := range rr.Nodes() {
			c.nodes.add(n)
		}
		c.ring, c.router, c.loc = rr, rr, ringLocator{rr: rr, c: c}
		if err := c.startSentinels(ctx); err != nil {
			c.Close()
			return nil, err
		}
	}
	if err := c.initTopology(ctx, cfg, ids, built.from); err != nil {
		c.Close()
		return nil, err
	}
	c.renameConns(ctx) // a migration's marker may already be past the fence
	if c.health.Interval > 0 {
		c.bg.Add(1)
		go c.healthLoop()
	}
	return c, nil
}

// discoverSeeds loads the first slot table from the seeds.
func (c *Client) discoverSeeds(ctx context.Context) error {
	t, err := c.discoverFunc()(ctx, c.cfg.Seeds, c.topologyDialer)
	if err != nil {
		return errtext.Errorf("shardis: cluster discovery: %w", err)
	}
	c.cl().install(t)
	c.refr.last = time.Now()
	return nil
}

// Router returns the router the client routes by.
func (c *Client) Router() Router { return userRouter(c.currentRouter()) }

// Nodes returns every node the client knows.
func (c *Client) Nodes() []Node { return c.currentRouter().Nodes() }

// Do sends one command to the node that serves its keys and returns the
// reply. Server error replies come back as redis.Error, as in redigo.
//
// MGET, MSET, DEL, UNLINK, EXISTS and TOUCH may name keys on several shards:
// they are split, sent in parallel and merged (MGET in key order; the
// counts summed). Any other command whose keys live on different shards
// fails with a *CrossShardError before anything is sent. A command the
// command table does not know (newer than its Redis version, a module's,
// a renamed one) is learned from the servers on its first call (COMMAND
// INFO, checked with COMMAND GETKEYS). A command without keys, or one the
// servers cannot describe either, fails with ErrNoKey or ErrUnknownCommand:
// name the target with DoKey or ForEachShard.
func (c *Client) Do(ctx context.Context, name string, args ...any) (any, error) {
	return c.do(ctx, name, args, nil)
}

// DoKey sends one command to the node that serves key, whatever the
// command's own arguments are. Use it for keyless commands that should run
// next to some key's data (SCRIPT LOAD, EVAL with no keys, ...) and for
// commands the command table does not know (module commands).
func (c *Client) DoKey(ctx context.Context, key string, name string, args ...any) (any, error) {
	return c.do(ctx, name, args, key)
}

func (c *Client) do(ctx context.Context, name string, args []any, routeKey any) (any, error) {
	if err := checkContext(ctx); err != nil {
		return nil, err
	}
	if c.closed.Load() {
		return nil, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("shardis: %w", err)
	}
	b := singleBatches.Get().(*batch)
	b.reset(1)
	kept := b.keep(args)
	// Planned and counted in one step, by the topology the migration's
	// fence allows (migrate_plan.go).
	fp, loc := c.planFence()
	c.add(b, loc, name, kept, routeKey)
	if b.reqs[0].err != nil && routeKey == nil && errors.Is(b.reqs[0].err, ErrUnknownCommand) {
		// Learning asks a server (COMMAND INFO), which may be slow: not
		// counted by the fence, whose switch would wait for it. Nothing
		// of the command ran; it is planned again afterwards, by the
		// topology then.
		c.endPlan(fp, false)
		learned := c.learnOne(ctx, b, name, kept)
		fp, loc = c.planFence()
		if learned {
			b.reset(1)
			c.add(b, loc, name, b.keep(args), routeKey)
		} // else b holds the request's error alone, and no call
	} else if routeKey != nil && fp.learnsRouted() && unknownRouted(b) {
		// The same for a command routed by the caller's key that the
		// execution would learn to move its keys first.
		c.endPlan(fp, false)
		failed := c.learnRoutedAhead(ctx, b)
		fp, loc = c.planFence()
		b.reset(1)
		c.add(b, loc, name, b.keep(args), routeKey)
		if fp.learnsRouted() {
			failRouted(b, failed)
		}
	}
	ctx, op, fp, replan := c.opStartPlanned(ctx, name, b, false, fp)
	if replan != nil { // the Start hook outlasted the plan (opStartPlanned)
		b.reset(1)
		c.add(b, replan, name, b.keep(args), routeKey)
		c.replanned(op, b)
	}
	c.plannedHold(fp, name)
	abandoned := c.runPlanned(ctx, b.calls, fp)
	if !abandoned && c.getPartRefused(&b.reqs[0]) {
		// A read of keys only, sent once more without GET parts
		// (noGetParts is set now): no loop. It stays the operation the
		// hooks were told of: the caller made one call, which does not
		// fail for the refused parts.
		b.release()
		fp, loc = c.planFence()
		b.reset(1)
		c.add(b, loc, name, b.keep(args), routeKey)
		c.replanned(op, b)
		abandoned = c.runPlanned(ctx, b.calls, fp)
	}
	reply, err := b.reqs[0].result()
	c.opFinish(ctx, op, b, err)
	if !abandoned { // else workers cut off by the context may still read it
		b.release()
		singleBatches.Put(b)
	}
	return reply, err
}

// singleBatches recycles the batches of single commands.
var singleBatches = sync.Pool{New: func() any { return new(batch) }}

// Close stops the background checks and closes every connection, and
// returns promptly whatever the servers do. Commands still queued on the
// automatic pipelines fail with ErrClosed (they were never sent); those in
// flight on them have 50 ms for their replies to arrive, and then fail
// with an error wrapping ErrClosed (they may have run). A health check or
// topology refresh in progress is cut short. A blocking command in flight
// (BLPOP, XREAD with BLOCK, WAIT, ...), whose reply the server may hold
// back without end, is cut too, also on a connection the client lent (a
// ForEachShard function's, a Conn's, a transaction's): it fails with an
// error wrapping ErrClosed (it may have run). Other calls in flight on connections of their own
// finish (each bounded by its timeouts and its context), and their
// connections close when they are done; later calls fail with ErrClosed. Close is idempotent: a Close while another one runs returns
// when that one does, with its result.
//
// Close may be called from inside code the client runs for the program
// (a hook, a Router's method, a HealthCheck, a ForEachShard function),
// which may run on a goroutine that Close waits for: there it marks the
// client closed (later calls fail with ErrClosed) and returns at once,
// and the rest of the closing goes on after the callback has returned; a
// later Close called from elsewhere waits for it. A Close inside such
// code of another Client (a hook of client A that closes client B) does
// its whole work before it returns, unless this client runs code of the
// program's at that moment too (Close tells by its goroutine's stack,
// which does not say whose code it is: it then returns at once).
func (c *Client) Close() error {
	inside := c.insideCallback()
	if c.closed.Swap(true) {
		if inside {
			return nil
		}
		<-c.closing
		return c.closeErr
	}
	if inside {
		go c.shutdown() // it may wait for the calling goroutine
		return nil
	}
	return c.shutdown()
}

// shutdown is Close once closed is set: it stops the background work,
// waits for it and closes the pools.
func (c *Client) shutdown() error {
	// A pipeline being started now finishes registering before the wait
	// below; any later one sees closed.
	c.autoPipes.waitRegistrations()
	c.waitStarts()
	c.subs.closeAll()
	close(c.stop)
	c.endLife()
	c.bg.Wait()
	c.inflight.Wait()
	c.closeErr = c.pools.Close()
	close(c.closing)
	return c.closeErr
}

// ringLocator locates keys on the ring; a key's group is its node.
type ringLocator struct {
	rr *RingRouter
	c  *Client // for why every shard is ejected (ringDownErr); nil for a migration's old ring
}

func (l ringLocator) locate(key any) (int, int, error) {
	i, err := ringIndex(l.rr.state.Load(), key)
	if err == ErrNoNodes && l.c != nil {
		err = l.c.ringDownErr(l.rr)
	}
	return i, i, err
}

// ringIndex returns the configured index of the node that serves key in
// ring state st (ErrNoNodes when st has no shard).
func ringIndex(st *ringState, key any) (int, error) {
	empty := st == nil || st.r == nil // the zero RingRouter, or every shard ejected
	switch k := key.(type) {
	case string:
		if empty {
			return -1, ErrNoNodes
		}
		return st.toCfg[st.r.Locate(k)], nil
	case []byte:
		if empty {
			return -1, ErrNoNodes
		}
		return st.toCfg[st.r.LocateBytes(k)], nil
	}
	s, ok := command.Arg(key)
	if !ok {
		return -1, fmt.Errorf("%w: key of type %T", ErrBadCommand, key)
	}
	if empty {
		return -1, ErrNoNodes
	}
	return st.toCfg[st.r.Locate(s)], nil
}

func (l ringLocator) groupLabel(group int) string {
	if group < 0 {
		return "?"
	}
	return l.rr.node(group).String()
}

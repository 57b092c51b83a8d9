package shard

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/shardis/shardis/internal/addrkey"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
)

// Mode says how keys are spread over servers.
type Mode string

// The modes.
const (
	// ModeRing shards over plain Redis servers with client-side consistent
	// hashing (package ring).
	ModeRing Mode = "ring"
	// ModeCluster talks to a Redis Cluster and routes by hash slot.
	ModeCluster Mode = "cluster"
)

// Config describes a Client. The same application code works with either
// mode; switching between them is a change of Config only.
type Config struct {
	// Mode is ModeRing (the default) or ModeCluster.
	Mode Mode

	// Shards are the ring-mode servers, in configured order. An entry
	// with a Name and no Addr is a Sentinel shard (see Sentinel).
	Shards []ring.Shard
	// Sentinel configures the ring shards that are Sentinel-monitored
	// master sets.
	Sentinel SentinelOptions
	// Hash is the ring placement algorithm ("" = ring.Murmur3).
	Hash ring.Algorithm
	// KeyHash is the key hash function ("" = the algorithm's default).
	KeyHash string
	// Tag is the key-tag rule: "none", "cluster", "jedis" or a two-character
	// pair such as "{}" ("" = the algorithm's default).
	Tag string

	// Seeds are the cluster-mode addresses (host:port) tried in turn for
	// discovering the cluster.
	Seeds []string

	// Cluster configures cluster mode.
	Cluster ClusterOptions

	// Pool configures the connection pool of every node.
	Pool pool.Options
	// DisableAutoPipeline turns automatic pipelining off. By default the
	// single commands (Do, DoKey) that concurrent goroutines send to one
	// node share one connection: they are written together and their
	// replies read in order, one write and one read per batch instead of
	// per command, which is what lets many goroutines sending small
	// commands go several times faster. A caller alone with its node, and
	// blocking, pub/sub and transaction commands, pipelines and commands
	// after an ASK redirect always use a pooled connection of their own.
	// Redis runs one command at a time anyway, so a slow command delays
	// the others either way; what sharing adds is that a large reply
	// (megabytes) is read before the replies queued behind it. Set this
	// when every command must have a connection to itself.
	DisableAutoPipeline bool
	// Health configures background health checks.
	Health HealthOptions
	// Hooks observe commands, pipelines, dials, refreshes and node state
	// changes (see Hooks); nil means none.
	Hooks *Hooks

	// Router, when set, places keys instead of Shards or Seeds: the
	// user's own rule (a year of data per shard, ...). Mode stays ring.
	// Validate requires its Nodes to be at least one host:port, and one
	// server under one address (localhost:P next to 127.0.0.1:P is
	// refused, as for Shards); a node without an address that Route
	// returns fails the command with ErrBadConfig, one with an address
	// no dial can use with pool.ErrBadAddr (nothing is sent in either
	// case).
	Router Router
	// Migration, when set, moves keys from another topology to this one
	// while the client serves them (see Migration, docs/resharding.md).
	Migration *Migration
}

// minHealthInterval is the shortest HealthOptions.Interval: shorter ones
// would run the checks back to back.
const minHealthInterval = 10 * time.Millisecond

// minHealthTimeout is the shortest HealthOptions.Timeout: a PING on
// loopback takes tens of microseconds, a dial more.
const minHealthTimeout = time.Millisecond

// HealthOptions configures how the client notices dead nodes.
type HealthOptions struct {
	// Interval between PINGs to each node. 0 means 1s; below 10ms is a
	// configuration error; a negative value turns background checks off
	// (nodes are then never marked down: nothing would bring them back),
	// which AutoEject cannot go with.
	Interval time.Duration
	// FailureLimit is how many consecutive failures mark a node down.
	// 0 means 3.
	FailureLimit int
	// Timeout bounds each health PING. 0 means 500ms; a positive value
	// below 1ms is a configuration error.
	Timeout time.Duration
	// AutoEject takes a down shard out of the ring so that its keys rehash
	// to the other shards until it comes back (twemproxy's
	// auto_eject_hosts). Off by default. Suitable for caches only: while a
	// shard is out its keys are written elsewhere, and when it comes back
	// reads see the values it held before it went away. It puts back only
	// the shards it took out: one ejected by hand (RingRouter.Eject) stays
	// out until RingRouter.Restore, whatever its health. A shard down
	// because its server refuses the client's credentials (NOAUTH,
	// WRONGPASS: a wrong password, a disabled ACL user) is reachable and
	// stays in the ring: its commands fail with an error matching
	// pool.ErrAuth (and ErrNodeDown) instead of running on other shards,
	// and one ejected for an outage that comes back refusing them is put
	// back. A shard whose certificate fails verification stays in the
	// ring too, its commands failing with the
	// *tls.CertificateVerificationError, and so does one whose ACL
	// refuses the health check's command (NOPERM: CheckReplication for a
	// user without +info), its commands failing with ErrNodeDown naming
	// the refusal.
	AutoEject bool
	// Check is the health check; nil means CheckPing. CheckReplication
	// reads INFO replication instead.
	Check HealthCheck
}

// ReadPolicy says which nodes serve read-only commands in cluster mode.
type ReadPolicy string

// The read policies.
const (
	// ReadMaster sends every command to the slot's master (the default).
	ReadMaster ReadPolicy = "master"
	// ReadReplicaRandom sends read-only commands to a random replica of the
	// slot's master (its connections send READONLY); writes go to the master.
	ReadReplicaRandom ReadPolicy = "replica-random"
	// ReadReplicaLatency sends read-only commands to the replica with the
	// lowest measured PING latency.
	ReadReplicaLatency ReadPolicy = "replica-latency"
)

// ClusterOptions configures cluster mode.
type ClusterOptions struct {
	// RefreshInterval between periodic topology refreshes. 0 means 60s; a
	// negative value turns periodic refreshes off (redirects and failures
	// still refresh); a positive value below 10ms is a configuration
	// error.
	RefreshInterval time.Duration
	// MinRefreshInterval is the least time between two topology queries,
	// so that a burst of redirects never becomes a storm of refreshes.
	// 0 means 100ms; a positive value below 1ms is a configuration error.
	MinRefreshInterval time.Duration
	// MaxRedirects bounds the MOVED/ASK hops of one command. 0 means
	// DefaultMaxRedirects.
	MaxRedirects int
	// MaxRetryWait bounds the time one command spends waiting and
	// retrying while the cluster cannot serve it (CLUSTERDOWN, TRYAGAIN,
	// LOADING, a refused connection during failover). 0 means 5s. The
	// context's deadline bounds it too. A command (or transaction) whose
	// write a node resets twice in a row (a value over its limits) is not
	// sent again: it fails with the *NodeError that says it did not run.
	MaxRetryWait time.Duration
	// ReadFrom chooses the nodes that serve read-only commands; "" means
	// ReadMaster.
	ReadFrom ReadPolicy
}

// DefaultMaxRedirects is the MOVED/ASK hops that one command of a
// cluster client follows when ClusterOptions.MaxRedirects is 0. The
// mover (package reshard) follows as many redirects of a cluster for one
// batch of keys unless told otherwise.
const DefaultMaxRedirects = 5

func (o ClusterOptions) withDefaults() ClusterOptions {
	if o.RefreshInterval == 0 {
		o.RefreshInterval = time.Minute
	}
	if o.MinRefreshInterval == 0 {
		o.MinRefreshInterval = 100 * time.Millisecond
	}
	if o.MaxRedirects == 0 {
		o.MaxRedirects = DefaultMaxRedirects
	}
	if o.MaxRetryWait == 0 {
		o.MaxRetryWait = 5 * time.Second
	}
	if o.ReadFrom == "" {
		o.ReadFrom = ReadMaster
	}
	return o
}

func (h HealthOptions) withDefaults() HealthOptions {
	if h.Interval == 0 {
		h.Interval = time.Second
	}
	if h.FailureLimit == 0 {
		h.FailureLimit = 3
	}
	if h.Timeout == 0 {
		h.Timeout = 500 * time.Millisecond
	}
	return h
}

// Validate reports the first problem with c, wrapped in ErrBadConfig.
func (c Config) Validate() error {
	_, err := c.validate()
	return err
}

// validated is what validate built to check a config: the ring of a ring
// config without a Router, and that of its Migration.From if it is one;
// nil otherwise.
type validated struct {
	ring, from *ring.Ring
}

// validate is Validate; it also returns the rings it built to check the
// shards, which New keeps rather than building the same rings again (at
// 1,000 shards a build takes tens of milliseconds and tens of megabytes).
func (c Config) validate() (v validated, _ error) {
	switch c.Mode {
	case "", ModeRing:
		if c.Router != nil {
			if len(c.Shards) > 0 || len(c.Seeds) > 0 {
				return validated{}, fmt.Errorf("%w: a Router places keys by itself; give no shards or seeds", ErrBadConfig)
			}
			nodes, err := routerCall("Router.Nodes", c.Router.Nodes)
			if err != nil {
				return validated{}, err
			}
			if err := checkRouterNodes(nodes); err != nil {
				return validated{}, err
			}
			if err := checkTopologyIDer(c.Router); err != nil { // migrate_router.go
				return validated{}, err
			}
			switch {
			case c.Hash != "" || c.KeyHash != "" || c.Tag != "":
				return validated{}, fmt.Errorf("%w: Hash, KeyHash and Tag place keys on a ring; a Router places them by itself", ErrBadConfig)
			case c.Health.AutoEject:
				return validated{}, fmt.Errorf("%w: Health.AutoEject takes shards out of a ring; a Router places keys by itself", ErrBadConfig)
			case !reflect.ValueOf(c.Sentinel).IsZero():
				return validated{}, fmt.Errorf("%w: Sentinel settings are for ring shards; a Router places keys by itself", ErrBadConfig)
			}
			break
		}
		if len(c.Shards) == 0 {
			return validated{}, fmt.Errorf("%w: ring mode needs at least one shard", ErrBadConfig)
		}
		if len(c.Seeds) > 0 {
			return validated{}, fmt.Errorf("%w: seeds are for cluster mode; ring mode takes shards", ErrBadConfig)
		}
		if err := c.validateSentinel(); err != nil {
			return validated{}, err
		}
		if err := checkShards(c.Shards); err != nil {
			return validated{}, err
		}
		r, err := ring.New(c.RingConfig())
		if err != nil {
			return validated{}, badConfigf("%w", err)
		}
		v.ring = r
		for i, s := range c.Shards {
			if s.Addr == "" {
				continue // a Sentinel shard
			}
			if err := checkHostPort(s.Addr); err != nil {
				return validated{}, badConfigf("shard %d: %w", i, err)
			}
		}
	case ModeCluster:
		if len(c.Seeds) == 0 {
			return validated{}, fmt.Errorf("%w: cluster mode needs at least one seed address", ErrBadConfig)
		}
		if len(c.Shards) > 0 || len(c.Sentinel.Shards) > 0 {
			return validated{}, fmt.Errorf("%w: shards are for ring mode; cluster mode takes seeds", ErrBadConfig)
		}
		if c.Pool.DB != 0 {
			return validated{}, fmt.Errorf("%w: Redis Cluster has only database 0", ErrBadConfig)
		}
		// What cluster mode would ignore is refused, as in URLs and files.
		switch {
		case c.Hash != "" || c.KeyHash != "" || c.Tag != "":
			return validated{}, fmt.Errorf("%w: Hash, KeyHash and Tag are for ring mode only (a cluster places keys by hash slot)", ErrBadConfig)
		case c.Health.AutoEject:
			return validated{}, fmt.Errorf("%w: Health.AutoEject is for ring mode only", ErrBadConfig)
		case c.Router != nil:
			return validated{}, fmt.Errorf("%w: a Router places keys in ring mode only; cluster mode routes by hash slot", ErrBadConfig)
		case !reflect.ValueOf(c.Sentinel).IsZero():
			return validated{}, fmt.Errorf("%w: Sentinel settings are for ring mode only", ErrBadConfig)
		}
		for i, s := range c.Seeds {
			if err := checkHostPort(s); err != nil {
				return validated{}, badConfigf("seed %d: %w", i, err)
			}
		}
	default:
		return validated{}, fmt.Errorf("%w: unknown mode %q (want %q or %q)", ErrBadConfig, c.Mode, ModeRing, ModeCluster)
	}
	// A ring config may carry an unused cluster block (a template for
	// both modes), but not an invalid value in it, as in config files.
	if err := c.Cluster.validate(); err != nil {
		return validated{}, err
	}
	if c.Health.FailureLimit < 0 {
		return validated{}, fmt.Errorf("%w: Health.FailureLimit %d < 0", ErrBadConfig, c.Health.FailureLimit)
	}
	if c.Health.Timeout < 0 {
		return validated{}, fmt.Errorf("%w: Health.Timeout %v < 0", ErrBadConfig, c.Health.Timeout)
	}
	// A few nanoseconds (Timeout: 500, meant as milliseconds) leaves no
	// check time to succeed: healthy nodes would be marked down, and dead
	// ones never.
	if c.Health.Timeout > 0 && c.Health.Timeout < minHealthTimeout {
		return validated{}, fmt.Errorf("%w: Health.Timeout %v is below %v: no health check could succeed",
			ErrBadConfig, c.Health.Timeout, minHealthTimeout)
	}
	if c.Health.Interval > 0 && c.Health.Interval < minHealthInterval {
		return validated{}, fmt.Errorf("%w: Health.Interval %v is below %v: the checks would run back to back (a negative interval turns them off)",
			ErrBadConfig, c.Health.Interval, minHealthInterval)
	}
	// Only the health checks mark a shard down, so without them auto-eject
	// would never take one out.
	if c.Health.AutoEject && c.Health.Interval < 0 {
		return validated{}, fmt.Errorf("%w: Health.AutoEject needs the health checks that a negative Health.Interval turns off: no shard would ever be taken out", ErrBadConfig)
	}
	if err := c.Pool.Validate(); err != nil {
		return validated{}, badConfigf("%w", err)
	}
	if c.Pool.ReadOnly {
		// Plain servers refuse READONLY; in a cluster the client sends it
		// itself on the replica connections it reads from.
		return validated{}, badConfigf("Pool.ReadOnly is not for a client: it sends READONLY itself where it reads from replicas (Cluster.ReadFrom, Sentinel.ReadFrom)")
	}
	from, err := c.validateMigration()
	if err != nil {
		return validated{}, err
	}
	v.from = from
	if m := c.Migration; m != nil {
		if err := checkMigrationAddrs(m.Addrs); err != nil {
			return validated{}, err
		}
		known, err := configAddrs(c)
		if err != nil {
			return validated{}, err
		}
		from, err := configAddrs(*m.From)
		if err != nil {
			return validated{}, err
		}
		if err := checkMigrationAddrKeys(m.Addrs, append(known, from...)); err != nil {
			return validated{}, err
		}
	}
	return v, nil
}

// validate checks the cluster options' values, whatever the mode: a
// misspelt read policy or a negative bound is an error even where the
// options go unused.
func (o ClusterOptions) validate() error {
	switch o.ReadFrom {
	case "", ReadMaster, ReadReplicaRandom, ReadReplicaLatency:
	default:
		return fmt.Errorf("%w: Cluster.ReadFrom: unknown read policy %q (want %q, %q or %q)", ErrBadConfig,
			o.ReadFrom, ReadMaster, ReadReplicaRandom, ReadReplicaLatency)
	}
	switch {
	case o.MaxRedirects < 0:
		return fmt.Errorf("%w: Cluster.MaxRedirects %d < 0", ErrBadConfig, o.MaxRedirects)
	case o.MaxRetryWait < 0:
		return fmt.Errorf("%w: Cluster.MaxRetryWait %v < 0", ErrBadConfig, o.MaxRetryWait)
	case o.MinRefreshInterval < 0:
		return fmt.Errorf("%w: Cluster.MinRefreshInterval %v < 0", ErrBadConfig, o.MinRefreshInterval)
	}
	// A few nanoseconds (RefreshInterval: 60, meant as seconds) would
	// spin the refresh loop and query the topology back to back, as
	// a tiny health or Sentinel interval would.
	if d := o.RefreshInterval; d > 0 && d < minHealthInterval {
		return fmt.Errorf("%w: Cluster.RefreshInterval %v is below %v: the refreshes would run back to back (a negative interval turns them off)",
			ErrBadConfig, d, minHealthInterval)
	}
	if d := o.MinRefreshInterval; d > 0 && d < minMinRefresh {
		return fmt.Errorf("%w: Cluster.MinRefreshInterval %v is below %v: a burst of redirects would query the topology back to back",
			ErrBadConfig, d, minMinRefresh)
	}
	return nil
}

// configAddrs lists the node addresses c names: its plain shards, a
// Router's nodes, its seeds. A panic of the Router's Nodes is the error.
func configAddrs(c Config) ([]string, error) {
	var addrs []string
	for _, s := range c.Shards {
		if s.Addr != "" {
			addrs = append(addrs, s.Addr)
		}
	}
	if c.Router != nil {
		nodes, err := routerCall("Router.Nodes", c.Router.Nodes)
		if err != nil {
			return nil, err
		}
		for _, n := range nodes {
			addrs = append(addrs, n.Addr)
		}
	}
	return append(addrs, c.Seeds...), nil
}

// checkMigrationAddrKeys refuses a Migration.Addrs key that names one of
// known, the configured node addresses, under another spelling
// (localhost:7001 for 127.0.0.1:7001): Addrs is looked up by the address
// the client dials, so such a key would never be used, and MIGRATE would
// go to the client's address, which from the old owners' hosts may be
// another server. Keys that name no configured node (a cluster's nodes,
// a Sentinel master) are left alone.
func checkMigrationAddrKeys(addrs map[string]string, known []string) error {
	for _, k := range slices.Sorted(maps.Keys(addrs)) {
		if slices.Contains(known, k) {
			continue
		}
		kk := serverKeys(k)
		for _, a := range known {
			if slices.ContainsFunc(serverKeys(a), func(f string) bool { return slices.Contains(kk, f) }) {
				return badConfigf("Migration.Addrs[%q]: the node is configured as %s, and Addrs is looked up by that address: write the key as %s",
					addrkey.Redact(k), a, a)
			}
		}
	}
	return nil
}

// checkMigrationAddrs checks Migration.Addrs: MIGRATE connects to its
// values, and one that is not host:port would be sent as a host with the
// default port. Its keys are looked up by the address the client dials,
// always a host:port without credentials: a key that is not one (a
// user:password@ pasted in, a missing port) would never be used, and
// MIGRATE would go to the untranslated address without a word.
func checkMigrationAddrs(addrs map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(addrs)) {
		if err := checkHostPort(k); err != nil {
			return badConfigf("Migration.Addrs key: %w", err)
		}
		if v := addrs[k]; v != "" {
			if err := checkHostPort(v); err != nil {
				return badConfigf("Migration.Addrs[%q]: %w", addrkey.Redact(k), err)
			}
		}
	}
	return nil
}

// RingConfig returns the ring configuration that c describes.
func (c Config) RingConfig() ring.Config {
	return ring.Config{Algorithm: c.Hash, KeyHash: c.KeyHash, Tag: c.Tag, Shards: c.ringShards()}
}

// String describes c as the client will use it: every default filled in
// (timeouts, limits, the ring's algorithm, key hash and tag, the Sentinel
// options and each Sentinel shard's Sentinels; a Router config shows no
// ring settings), and never a password (shown as ***). A Sentinel shard
// shows as <sentinel>:WEIGHT NAME in the shard list.
func (c Config) String() string { return configString(c) }

// GoString is String, so that %#v, which would print every field as it
// is (the Sentinel passwords among them), hides the passwords too.
func (c Config) GoString() string { return configString(c) }

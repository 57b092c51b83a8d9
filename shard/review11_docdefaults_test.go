package shard

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
)

// TestDocumentedDefaultsMatchTheCode pins the defaults and bounds that
// docs/cluster.md, docs/sentinel.md, docs/pubsub.md, docs/config.md and
// docs/internals.md state, each written
// here as the documentation gives it, so that changing one in the code
// without the documentation (or the other way round) fails here.
func TestDocumentedDefaultsMatchTheCode(t *testing.T) {
	cl := ClusterOptions{}.withDefaults()
	se := SentinelOptions{}.withDefaults()
	he := HealthOptions{}.withDefaults()
	tests := []struct {
		doc       string // where the documentation says it
		got, want any
	}{
		{"cluster.md: MaxRedirects (default 5, as Jedis)", cl.MaxRedirects, 5},
		{"cluster.md: MaxRetryWait (default 5s)", cl.MaxRetryWait, 5 * time.Second},
		{"cluster.md: RefreshInterval (default 60s)", cl.RefreshInterval, 60 * time.Second},
		{"cluster.md: MinRefreshInterval, default 100 ms", cl.MinRefreshInterval, 100 * time.Millisecond},
		{"cluster.md: ReadFrom master (default)", cl.ReadFrom, ReadPolicy("master")},
		{"cluster.md: a node that has not answered within 100 ms, the next as well", hedgeDelay, 100 * time.Millisecond},
		{"cluster.md: a positive RefreshInterval below 10 ms is refused", minHealthInterval, 10 * time.Millisecond},
		{"cluster.md/sentinel.md: a MinRefreshInterval below 1 ms is refused", minMinRefresh, time.Millisecond},
		{"sentinel.md: RefreshInterval, 5 s by default", se.RefreshInterval, 5 * time.Second},
		{"sentinel.md: MinRefreshInterval (100 ms)", se.MinRefreshInterval, 100 * time.Millisecond},
		{"sentinel.md: ReadFrom ReadMaster by default", se.ReadFrom, ReadMaster},
		{"sentinel.md: FailoverWait 0 by default (fail at once)", se.FailoverWait, time.Duration(0)},
		{"sentinel.md: for 10 s after a +switch-master a query keeps the announced master", switchBackGuard, 10 * time.Second},
		{"sentinel.md: sentinel_timeout or failover_wait below 1ms is refused", minSentinelDuration, time.Millisecond},
		{"config.md: health.interval 1s", he.Interval, time.Second},
		{"config.md: health.failure_limit 3", he.FailureLimit, 3},
		{"config.md: health.timeout 500ms", he.Timeout, 500 * time.Millisecond},
		{"config.md: pool.max_idle 64", pool.DefaultMaxIdle, 64},
		{"config.md: pool.idle_timeout 5m", pool.DefaultIdleTimeout, 5 * time.Minute},
		{"config.md: pool.test_on_borrow 1m", pool.DefaultTestOnBorrow, time.Minute},
		{"config.md: pool.dial_timeout 5s", pool.DefaultDialTimeout, 5 * time.Second},
		{"config.md: pool.read_timeout 3s", pool.DefaultReadTimeout, 3 * time.Second},
		{"config.md: pool.write_timeout 3s", pool.DefaultWriteTimeout, 3 * time.Second},
		{"config.md: health.interval (10ms or more)", minHealthInterval, 10 * time.Millisecond},
		{"config.md: health.timeout (1ms or more)", minHealthTimeout, time.Millisecond},
		{"internals.md: at most 1 ms of waiting for a reply", harvestWait, time.Millisecond},
		{"internals.md: and 5 ms for a node", harvestBudget, 5 * time.Millisecond},
		{"internals.md: nothing queued for 100 ms: handed back to the pool", pipeIdleCheck, 100 * time.Millisecond},
		{"internals.md/failures.md: Close gives the replies in flight 50 ms", closeGrace, 50 * time.Millisecond},
		{"internals.md: its reader's queue (4096 commands)", autoQueue, 4096},
		{"pubsub.md: BufferSize (default 16,384)", DefaultSubscriptionBuffer, 16384},
		{"pubsub.md: PingInterval (1 s)", DefaultPingInterval, time.Second},
		{"pubsub.md: MaxBackoff, 500 ms by default", DefaultMaxRedialBackoff, 500 * time.Millisecond},
		{"pubsub.md: MOVED without an address: channels sent again 50 ms later", movedNoAddrHold, 50 * time.Millisecond},
		{"pubsub.md: each process switches when its next poll reads the marker (shard.FencePoll, 100 ms)", FencePoll, 100 * time.Millisecond},
		{"pubsub.md: Patterns default: every keyspace and keyevent channel",
			slices.Sorted(slices.Values(DefaultKeyspacePatterns)), []string{"__keyevent@*__:*", "__keyspace@*__:*"}},
	}
	for _, tt := range tests {
		if !equalAny(tt.got, tt.want) {
			t.Errorf("%s: the code has %v", tt.doc, tt.got)
		}
	}
}

func equalAny(a, b any) bool {
	as, aok := a.([]string)
	bs, bok := b.([]string)
	if aok || bok {
		return aok && bok && slices.Equal(as, bs)
	}
	return a == b
}

// TestDocumentedBoundsAreEnforced checks the bounds the documentation
// states at their edges: just below is refused with ErrBadConfig, the
// bound itself is taken.
func TestDocumentedBoundsAreEnforced(t *testing.T) {
	clusterCfg := func(o ClusterOptions) Config {
		return Config{Mode: ModeCluster, Seeds: []string{"127.0.0.1:7000"}, Cluster: o}
	}
	sentinelCfg := func(o SentinelOptions) Config {
		o.Addrs = []string{"127.0.0.1:26379"}
		o.Shards = []SentinelShard{{Name: "a", MasterName: "m"}}
		return Config{Shards: []ring.Shard{{Name: "a", Weight: 1}}, Sentinel: o}
	}
	tests := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"cluster RefreshInterval 9ms", clusterCfg(ClusterOptions{RefreshInterval: 9 * time.Millisecond}), false},
		{"cluster RefreshInterval 10ms", clusterCfg(ClusterOptions{RefreshInterval: 10 * time.Millisecond}), true},
		{"cluster RefreshInterval negative (off)", clusterCfg(ClusterOptions{RefreshInterval: -1}), true},
		{"cluster MinRefreshInterval 999µs", clusterCfg(ClusterOptions{MinRefreshInterval: 999 * time.Microsecond}), false},
		{"cluster MinRefreshInterval 1ms", clusterCfg(ClusterOptions{MinRefreshInterval: time.Millisecond}), true},
		{"sentinel RefreshInterval 9ms", sentinelCfg(SentinelOptions{RefreshInterval: 9 * time.Millisecond}), false},
		{"sentinel RefreshInterval 10ms", sentinelCfg(SentinelOptions{RefreshInterval: 10 * time.Millisecond}), true},
		{"sentinel MinRefreshInterval 999µs", sentinelCfg(SentinelOptions{MinRefreshInterval: 999 * time.Microsecond}), false},
		{"sentinel MinRefreshInterval 1ms", sentinelCfg(SentinelOptions{MinRefreshInterval: time.Millisecond}), true},
		{"sentinel Timeout 999µs", sentinelCfg(SentinelOptions{Timeout: 999 * time.Microsecond}), false},
		{"sentinel Timeout 1ms", sentinelCfg(SentinelOptions{Timeout: time.Millisecond}), true},
		{"sentinel FailoverWait 999µs", sentinelCfg(SentinelOptions{FailoverWait: 999 * time.Microsecond}), false},
		{"sentinel FailoverWait 1ms", sentinelCfg(SentinelOptions{FailoverWait: time.Millisecond}), true},
	}
	for _, tt := range tests {
		err := tt.cfg.Validate()
		switch {
		case tt.ok && err != nil:
			t.Errorf("%s: refused: %v", tt.name, err)
		case !tt.ok && !errors.Is(err, ErrBadConfig):
			t.Errorf("%s: got %v, want an error matching ErrBadConfig", tt.name, err)
		}
	}
}

// TestDocumentedSentinelURLOptions parses the URL of docs/sentinel.md, with
// every option it names, and checks where each lands.
func TestDocumentedSentinelURLOptions(t *testing.T) {
	cfg, err := ParseURL("redis-ring+sentinel://app:secret@10.0.9.1:26379,10.0.9.2:26379,10.0.9.3:26379" +
		"?shards=10.0.0.1:6379+shard-a,shard-b=master-b,shard-c=master-c&hash=jedis" +
		"&sentinel_username=sen&sentinel_password=a%2Bb&failover_wait=5s&read_from=replica-random" +
		"&sentinel_refresh_interval=2s&sentinel_min_refresh_interval=50ms&sentinel_timeout=300ms")
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Sentinel
	checks := []struct {
		what      string
		got, want any
	}{
		{"shards", len(cfg.Shards), 3},
		{"plain shard's address", shardAddr(cfg, 0), "10.0.0.1:6379"},
		{"Sentinel shards", len(s.Shards), 2},
		{"Sentinels", len(s.Addrs), 3},
		{"data nodes' user (before the @)", cfg.Pool.Username, "app"},
		{"data nodes' password (before the @)", cfg.Pool.Password, "secret"},
		{"sentinel_username", s.Username, "sen"},
		{"sentinel_password (%2B is a +)", s.Password, "a+b"},
		{"failover_wait", s.FailoverWait, 5 * time.Second},
		{"read_from", s.ReadFrom, ReadReplicaRandom},
		{"sentinel_refresh_interval", s.RefreshInterval, 2 * time.Second},
		{"sentinel_min_refresh_interval", s.MinRefreshInterval, 50 * time.Millisecond},
		{"sentinel_timeout", s.Timeout, 300 * time.Millisecond},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.what, c.got, c.want)
		}
	}
	if len(s.Shards) == 2 && (s.Shards[0].Name != "shard-b" || s.Shards[0].MasterName != "master-b") {
		t.Errorf("first Sentinel shard: %+v, want shard-b=master-b", s.Shards[0])
	}
}

func shardAddr(cfg Config, i int) string {
	if i >= len(cfg.Shards) {
		return ""
	}
	return cfg.Shards[i].Addr
}

// TestDocumentedSentinelURLPlus: docs/sentinel.md says a "+" in an option
// value is a space ("sentinel_password=a+b is the password a b"), while in
// the user info before the "@" a "+" is a "+".
func TestDocumentedSentinelURLPlus(t *testing.T) {
	cfg, err := ParseURL("redis-ring+sentinel://us+er:pa+ss@10.0.9.1:26379?shards=shard-b=master-b&sentinel_password=a+b&sentinel_username=c+d")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ what, got, want string }{
		{"sentinel_password=a+b", cfg.Sentinel.Password, "a b"},
		{"sentinel_username=c+d", cfg.Sentinel.Username, "c d"},
		{"user before the @", cfg.Pool.Username, "us+er"},
		{"password before the @", cfg.Pool.Password, "pa+ss"},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %q, want %q", c.what, c.got, c.want)
		}
	}
}

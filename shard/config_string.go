package shard

import (
	"fmt"
	"strings"
	"time"

	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
)

// configString is Config.String: the configuration with the defaults that
// New will use in place of zero values.
func configString(c Config) string {
	var b strings.Builder
	mode := c.Mode
	if mode == "" {
		mode = ModeRing
	}
	fmt.Fprintf(&b, "shard.Config{Mode: %s", mode)
	if mode == ModeCluster {
		cl := c.Cluster.withDefaults()
		fmt.Fprintf(&b, ", Seeds: %v, Cluster: {RefreshInterval: %s, MinRefreshInterval: %s, MaxRedirects: %d, MaxRetryWait: %s, ReadFrom: %s}",
			c.Seeds, onOff(cl.RefreshInterval), cl.MinRefreshInterval, cl.MaxRedirects, cl.MaxRetryWait, cl.ReadFrom)
	} else {
		// The ring fills in the algorithm's defaults; a one-shard ring is
		// enough to learn them without building the configured one.
		rc := c.RingConfig()
		probe := rc
		probe.Shards = []ring.Shard{{Addr: "127.0.0.1:1", Weight: 1}}
		if r, err := ring.New(probe); err == nil {
			d := r.Config()
			rc.Algorithm, rc.KeyHash, rc.Tag = d.Algorithm, d.KeyHash, d.Tag
		}
		fmt.Fprintf(&b, ", Shards: %v", c.Shards)
		if len(c.Sentinel.Shards) > 0 {
			b.WriteString(", Sentinel: " + c.Sentinel.String())
		}
		fmt.Fprintf(&b, ", Hash: %s, KeyHash: %s, Tag: %s", orUnset(string(rc.Algorithm)), orUnset(rc.KeyHash), orUnset(rc.Tag))
	}
	if c.Router != nil {
		fmt.Fprintf(&b, ", Router: %T", c.Router)
	}
	if m := c.Migration; m != nil && m.From != nil {
		// Only the old topology's placement counts (it shares the pool
		// options), so that is what is shown.
		from := *m.From
		fmt.Fprintf(&b, ", Migration: {From: %s}", TopologyID(from))
	}
	h := c.Health.withDefaults()
	fmt.Fprintf(&b, ", AutoPipeline: %t, Pool: {%s}, Health: {Interval: %s, FailureLimit: %d, Timeout: %s, AutoEject: %t}}",
		!c.DisableAutoPipeline, poolWithDefaults(c.Pool), onOff(h.Interval), h.FailureLimit, h.Timeout, h.AutoEject)
	return b.String()
}

// poolWithDefaults fills in the defaults package pool uses for zero options.
func poolWithDefaults(o pool.Options) pool.Options {
	set := func(d *time.Duration, def time.Duration) {
		if *d == 0 {
			*d = def
		}
	}
	if o.MaxIdle == 0 {
		o.MaxIdle = pool.DefaultMaxIdle
	}
	set(&o.IdleTimeout, pool.DefaultIdleTimeout)
	set(&o.TestOnBorrow, pool.DefaultTestOnBorrow)
	set(&o.DialTimeout, pool.DefaultDialTimeout)
	set(&o.ReadTimeout, pool.DefaultReadTimeout)
	set(&o.WriteTimeout, pool.DefaultWriteTimeout)
	return o
}

// onOff shows a negative interval as "off".
func onOff(d time.Duration) string {
	if d < 0 {
		return "off"
	}
	return d.String()
}

func orUnset(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

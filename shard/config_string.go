package shard

import (
	"fmt"
	"strings"
	"time"

	"github.com/shardis/shardis/internal/addrkey"
	"github.com/shardis/shardis/pool"
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
			redactAddrs(c.Seeds), onOff(cl.RefreshInterval), cl.MinRefreshInterval, cl.MaxRedirects, cl.MaxRetryWait, cl.ReadFrom)
	} else if c.Router == nil { // a Router places keys without a ring
		// The ring's algorithm defaults, learnt without building a ring:
		// String must stay cheap.
		rc := c.RingConfig()
		if d, err := rc.WithDefaults(); err == nil {
			rc.Algorithm, rc.KeyHash, rc.Tag = d.Algorithm, d.KeyHash, d.Tag
		}
		b.WriteString(", Shards: [")
		for i, s := range c.Shards {
			if i > 0 {
				b.WriteString(" ")
			}
			if s.Addr == "" { // a Sentinel shard: its address comes from the Sentinels
				s.Addr = "<sentinel>"
			}
			s.Addr = addrkey.Redact(s.Addr) // credentials pasted into it (Validate refuses them)
			b.WriteString(s.String())
		}
		b.WriteString("]")
		if len(c.Sentinel.Shards) > 0 {
			b.WriteString(", Sentinel: " + sentinelWithDefaults(c.Sentinel).String())
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
		id, err := checkedTopologyID(from) // a panic of its Router's is shown, not raised
		if err != nil {
			id = "<" + plainMessage(err) + ">"
		}
		fmt.Fprintf(&b, ", Migration: {From: %s}", id)
	}
	h := c.Health.withDefaults()
	fmt.Fprintf(&b, ", AutoPipeline: %t, Pool: {%s}, Health: {Interval: %s, FailureLimit: %d, Timeout: %s, AutoEject: %t}}",
		!c.DisableAutoPipeline, poolWithDefaults(c.Pool), onOff(h.Interval), h.FailureLimit, h.Timeout, h.AutoEject)
	return b.String()
}

// sentinelWithDefaults is o with the defaults the client uses filled in,
// each shard's included (its Sentinels, credentials and TLS when it has
// none of its own); o itself is not changed.
func sentinelWithDefaults(o SentinelOptions) SentinelOptions {
	d := o.withDefaults()
	if d.Timeout == 0 {
		d.Timeout = time.Second // clientOptions
	}
	d.Shards = make([]SentinelShard, len(o.Shards))
	for i, s := range o.Shards {
		s = o.resolved(s)
		s.MasterName = s.master()
		d.Shards[i] = s
	}
	return d
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

package shard_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/sentinel"
	"github.com/shardis/shardis/shard"
)

// TestReview10SentinelDurationsBelowAMillisecond: a positive Sentinel
// duration below a millisecond is a unit left out (Timeout: 500 meant as
// milliseconds, FailoverWait: 3 meant as seconds), as for the pool's
// durations: it is refused with ErrBadConfig and an error that names the
// field. Before, a Timeout of 500ns was taken: every Sentinel query
// timed out and New failed with "no Sentinel answered", which sent the
// user looking at the Sentinels; a FailoverWait of 3ns silently waited
// for no failover at all. The refresh intervals' errors name their field
// too.
func TestReview10SentinelDurationsBelowAMillisecond(t *testing.T) {
	cfg := func(f func(*shard.SentinelOptions)) shard.Config {
		c := shard.Config{Shards: []ring.Shard{{Name: "a", Weight: 1}},
			Sentinel: shard.SentinelOptions{Addrs: []string{"127.0.0.1:26379"}, Shards: []shard.SentinelShard{{Name: "a"}}}}
		f(&c.Sentinel)
		return c
	}
	for _, tc := range []struct {
		set   func(*shard.SentinelOptions)
		field string
	}{
		{func(o *shard.SentinelOptions) { o.Timeout = 500 }, "Sentinel.Timeout"},
		{func(o *shard.SentinelOptions) { o.Timeout = time.Millisecond - 1 }, "Sentinel.Timeout"},
		{func(o *shard.SentinelOptions) { o.FailoverWait = 3 }, "Sentinel.FailoverWait"},
		{func(o *shard.SentinelOptions) { o.RefreshInterval = 5 }, "Sentinel.RefreshInterval"},
		{func(o *shard.SentinelOptions) { o.MinRefreshInterval = 100 }, "Sentinel.MinRefreshInterval"},
	} {
		err := cfg(tc.set).Validate()
		if !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("%s too short: Validate = %v, want ErrBadConfig", tc.field, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s too short: %q does not name the field", tc.field, err)
		}
	}
	for _, ok := range []func(*shard.SentinelOptions){
		func(o *shard.SentinelOptions) {},
		func(o *shard.SentinelOptions) { o.Timeout = time.Millisecond; o.FailoverWait = time.Millisecond },
		func(o *shard.SentinelOptions) { o.Timeout = 250 * time.Millisecond; o.FailoverWait = 3 * time.Second },
	} {
		if err := cfg(ok).Validate(); err != nil {
			t.Errorf("Validate: %v, want it accepted", err)
		}
	}
	for _, q := range []string{"&sentinel_timeout=500ns", "&failover_wait=3ns"} {
		if _, err := shard.ParseURL("redis-ring+sentinel://127.0.0.1:26379?shards=a" + q); !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("ParseURL with %s: %v, want ErrBadConfig", q, err)
		}
	}

	// The sentinel package's own options, the same way.
	for _, tc := range []struct {
		o     sentinel.Options
		field string
	}{
		{sentinel.Options{DialTimeout: 500}, "DialTimeout"},
		{sentinel.Options{ReadTimeout: 999 * time.Microsecond}, "ReadTimeout"},
	} {
		_, err := sentinel.New("m", []string{"127.0.0.1:26379"}, tc.o)
		if !errors.Is(err, sentinel.ErrBadOptions) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("sentinel.New with a tiny %s: %v, want ErrBadOptions naming it", tc.field, err)
		}
	}
	if _, err := sentinel.New("m", []string{"127.0.0.1:26379"}, sentinel.Options{DialTimeout: time.Millisecond, ReadTimeout: time.Second}); err != nil {
		t.Errorf("sentinel.New with 1ms and 1s: %v", err)
	}
}

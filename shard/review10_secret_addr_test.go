package shard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// oneSentinelShard is a ring of one Sentinel shard "a" with options o.
func oneSentinelShard(o shard.SentinelOptions) shard.Config {
	if len(o.Shards) == 0 {
		o.Shards = []shard.SentinelShard{{Name: "a"}}
	}
	return shard.Config{Shards: []ring.Shard{{Name: "a", Weight: 1}}, Sentinel: o}
}

// TestReview10AddressCredentialsNeverInErrors: an address with
// credentials pasted into it ("user:password@host:port") is refused, and
// the refusal shows it redacted. Validate checked a shard's weight and
// compared shards before it looked at the address, so a weight of 0 or a
// second spelling of the host quoted the password; a Router node's
// label in its error was the raw address; and a Router's Route answer
// with credentials became a node whose every error (and Stats entry)
// showed them. A Sentinel address with credentials was quoted raw, or
// accepted when it otherwise looked like host:port, and a Migration.Addrs
// key was quoted raw in the error about its value.
func TestReview10AddressCredentialsNeverInErrors(t *testing.T) {
	const secret = "s3cretA"
	for _, cfg := range []shard.Config{
		{Shards: []ring.Shard{{Addr: "u:" + secret + "@127.0.0.1:1", Weight: 0}}},
		{Shards: []ring.Shard{{Addr: "127.0.0.1:1", Weight: 1}, {Addr: secret + "@h:1", Weight: 0}}},
		{Shards: []ring.Shard{{Addr: secret + "@h:1", Weight: 1}, {Addr: secret + "@H:1", Weight: 1}}},
		{Router: listRouter{{Addr: "u:" + secret + "@127.0.0.1:1"}}},
		{Router: listRouter{{Addr: secret + "@h:1"}}},
		oneSentinelShard(shard.SentinelOptions{Addrs: []string{"u:" + secret + "@127.0.0.1:1"}}),
		oneSentinelShard(shard.SentinelOptions{Addrs: []string{secret + "@h:1"}}),
		oneSentinelShard(shard.SentinelOptions{Shards: []shard.SentinelShard{{Name: "a", Addrs: []string{"127.0.0.1:2", secret + "@h:1"}}}}),
		{Shards: []ring.Shard{{Addr: "127.0.0.1:1", Weight: 1}}, Migration: &shard.Migration{
			From:  &shard.Config{Shards: []ring.Shard{{Addr: "127.0.0.2:1", Weight: 1}}},
			Addrs: map[string]string{"u:" + secret + "@127.0.0.2:1": "no-port"},
		}},
	} {
		err := cfg.Validate()
		if !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("Validate(%v) = %v, want ErrBadConfig", cfg.Shards, err)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("Validate: %q shows the password", err)
		}
	}

	srv := redistest.StartTB(t, redistest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := newClient(t, shard.Config{Router: addrRouter{listed: shard.Node{Name: "a", Addr: srv.Addr}}, Health: shard.HealthOptions{Interval: -1}})
	for _, key := range []string{"bad:u:" + secret + "@" + srv.Addr, "bad:" + secret + "@" + srv.Addr} {
		_, err := c.Do(ctx, "GET", key)
		if !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("a Route answer with credentials: %v, want ErrBadConfig", err)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("a Route answer with credentials: %q shows the password", err)
		}
	}
	for _, ns := range c.Stats().Nodes {
		if strings.Contains(ns.Node.String()+ns.Node.Addr, secret) {
			t.Errorf("Stats lists %+v", ns.Node)
		}
	}
}

// TestReview10ConfigPrintsNoPastedCredentials: what fmt prints of a
// Config hides its passwords, and a program may log a Config before New
// validates it; credentials pasted into a shard, seed or Sentinel address
// were printed as written.
func TestReview10ConfigPrintsNoPastedCredentials(t *testing.T) {
	const secret = "s3cretA"
	for _, cfg := range []shard.Config{
		{Shards: []ring.Shard{{Addr: "u:" + secret + "@127.0.0.1:1", Weight: 1}}},
		{Mode: shard.ModeCluster, Seeds: []string{secret + "@127.0.0.1:1"}},
		oneSentinelShard(shard.SentinelOptions{Addrs: []string{"u:" + secret + "@127.0.0.1:26379"}}),
		oneSentinelShard(shard.SentinelOptions{Shards: []shard.SentinelShard{{Name: "a", Addrs: []string{secret + "@127.0.0.1:26379"}}}}),
	} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
			for _, v := range []any{cfg, cfg.Sentinel} {
				if out := fmt.Sprintf(verb, v); strings.Contains(out, secret) {
					t.Errorf("%s of %T shows the password: %s", verb, v, out)
				}
			}
		}
	}
}

package shard_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// TestReview9MigrationAddrsKeyUnderAnotherSpelling: Migration.Addrs maps
// a node address, as the client dials it, to the address the old owners
// reach it at, and is looked up by that exact address. A key naming a
// shard under another spelling (localhost:7001 for the shard
// 127.0.0.1:7001) was accepted and never used: MIGRATE went to the
// client's address, which from another host is another server or none.
// Validate now refuses such a key, naming both spellings; keys that name
// no configured node (a cluster's nodes, a Sentinel master) stay
// accepted.
func TestReview9MigrationAddrsKeyUnderAnotherSpelling(t *testing.T) {
	from := shard.Config{Shards: []ring.Shard{{Addr: "127.0.0.1:7002", Weight: 1}}}
	cfg := func(addrs map[string]string) shard.Config {
		f := from
		return shard.Config{
			Shards:    []ring.Shard{{Addr: "127.0.0.1:7001", Weight: 1}, {Addr: "127.0.0.1:7002", Weight: 1}},
			Migration: &shard.Migration{From: &f, Addrs: addrs},
		}
	}
	for _, key := range []string{"localhost:7001", "[::ffff:127.0.0.1]:7001", "0.0.0.0:7002"} {
		err := cfg(map[string]string{key: "10.0.0.1:7001"}).Validate()
		if !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("Validate with Migration.Addrs key %s: %v, want ErrBadConfig", key, err)
			continue
		}
		if !strings.Contains(err.Error(), key) {
			t.Errorf("Validate with Migration.Addrs key %s: %q does not name it", key, err)
		}
	}
	for _, key := range []string{"127.0.0.1:7001", "127.0.0.1:7002", "10.9.9.9:7001"} {
		if err := cfg(map[string]string{key: "10.0.0.1:7001"}).Validate(); err != nil {
			t.Errorf("Validate with Migration.Addrs key %s: %v, want it accepted", key, err)
		}
	}
	// StartMigration's Addrs are checked alike.
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	c := newClient(t, ringConfig(servers[:1]))
	to := ringConfig(servers)
	_, port, _ := net.SplitHostPort(servers[1].Addr)
	key := net.JoinHostPort("localhost", port)
	to.Migration = &shard.Migration{Addrs: map[string]string{key: "10.0.0.1:7001"}}
	if err := c.StartMigration(context.Background(), to); !errors.Is(err, shard.ErrBadConfig) || !strings.Contains(err.Error(), key) {
		t.Errorf("StartMigration with Addrs key %s: %v, want ErrBadConfig naming it", key, err)
	}
	if _, on := c.Migration(); on {
		t.Errorf("StartMigration refused, but a migration is on")
	}

	// A Router's nodes are known too.
	r := listRouter{{Name: "a", Addr: "127.0.0.1:7001"}}
	f := from
	err := shard.Config{Router: r, Migration: &shard.Migration{From: &f, Addrs: map[string]string{"localhost:7001": "10.0.0.1:7001"}}}.Validate()
	if !errors.Is(err, shard.ErrBadConfig) {
		t.Errorf("Validate with a Router and Migration.Addrs key localhost:7001: %v, want ErrBadConfig", err)
	}
}

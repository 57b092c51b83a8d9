package shard_test

import (
	"errors"
	"net"
	"strconv"
	"testing"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// TestReview11OneLinkLocalServerTwoZoneSpellings: a link-local server
// listed once with its zone by interface name and once by index
// ("[fe80::1%lo]:6379", "[fe80::1%1]:6379": one interface, one server to
// a dial) was accepted as two shards, the ring splitting the keys between
// them; a loopback address with a zone ("[::1%lo]", which a dial ignores)
// next to the plain one likewise. Validate now refuses them as the same
// server, as it does localhost next to 127.0.0.1.
func TestReview11OneLinkLocalServerTwoZoneSpellings(t *testing.T) {
	lo, err := net.InterfaceByIndex(1)
	if err != nil {
		ifs, err2 := net.Interfaces()
		if err2 != nil || len(ifs) == 0 {
			t.Skipf("no interface to name a zone by: %v %v", err, err2)
		}
		lo = &ifs[0]
	}
	for _, pair := range [][2]string{
		{"[fe80::1%" + lo.Name + "]:6379", "[fe80::1%" + strconv.Itoa(lo.Index) + "]:6379"},
		{"[::1%" + lo.Name + "]:6379", "[::1]:6379"},
	} {
		cfg := shard.Config{Shards: []ring.Shard{{Addr: pair[0], Weight: 1}, {Addr: pair[1], Weight: 1}}}
		err := cfg.Validate()
		if !errors.Is(err, shard.ErrBadConfig) || !errors.Is(err, ring.ErrDuplicateShard) {
			t.Errorf("Validate of shards %s and %s: %v, want ErrBadConfig and ring.ErrDuplicateShard", pair[0], pair[1], err)
		}
	}
	// Two interfaces are two servers.
	if other, err := net.InterfaceByIndex(lo.Index + 1); err == nil {
		cfg := shard.Config{Shards: []ring.Shard{
			{Addr: "[fe80::1%" + lo.Name + "]:6379", Weight: 1}, {Addr: "[fe80::1%" + other.Name + "]:6379", Weight: 1}}}
		if err := cfg.Validate(); err != nil {
			t.Errorf("Validate of one address on two interfaces: %v", err)
		}
	}
}

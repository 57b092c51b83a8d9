package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
)

// With ketama placement a shard's number of points depends on the weights
// of the shards in the ring, as in twemproxy: taking a shard out can
// leave a light one with a weight too small for a point of its own. The
// down shard must still leave the ring (twemproxy then gives the light
// server no point; it does not keep the dead one in): before, the
// rebuilt ring was refused, the ejection silently did not happen, and
// the dead shard's keys kept failing.
func TestAutoEjectKetamaWithALightShard(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Hash = ring.Ketama
	// 3 servers, weights 1+100+1: shard-0 has floor(1/102*40*3)*4 = 4
	// points. Without shard-2: floor(1/101*40*2) = 0.
	cfg.Shards[1].Weight = 100
	cfg.Health.AutoEject = true
	c := newClient(t, cfg)

	dead := servers[2]
	var key string
	for i := 0; key == ""; i++ {
		k := fmt.Sprintf("ke:%d", i)
		n, err := c.Router().Route(k)
		if err != nil {
			t.Fatal(err)
		}
		if n.Addr == dead.Addr {
			key = k
		}
	}
	if err := dead.Kill(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the dead shard to be ejected", func() bool {
		n, err := c.Router().Route(key)
		return err == nil && n.Addr != dead.Addr
	})
	if _, err := c.Do(ctx, "SET", key, "moved"); err != nil {
		t.Fatalf("SET %s after the ejection: %v", key, err)
	}
	if err := dead.Restart(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the shard to rejoin the ring", func() bool {
		n, err := c.Router().Route(key)
		return err == nil && n.Addr == dead.Addr
	})
	if _, err := c.Do(ctx, "SET", key, "home"); err != nil {
		t.Fatal(err)
	}
	if v, err := dead.Do("GET", key); err != nil || v != "home" {
		t.Fatalf("GET %s on the restored shard = %q, %v; want home", key, v, err)
	}
}

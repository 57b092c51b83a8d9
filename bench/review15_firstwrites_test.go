package bench

import (
	"context"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// The first writes of BenchmarkMigrationFirstWrites are checked against
// what their mode expects: a SET NX of a key that exists at its old owner
// answers nil through a migrating client; an "OK" there means the write
// went to the new owner alone, which a client that skips the old owner
// would look faster for.
func TestReview15FirstWritesCheckReplies(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	ctx := context.Background()
	if _, err := servers[0].Do("SET", "fw-key", "old"); err != nil {
		t.Fatal(err)
	}
	oldRing := shard.Config{Shards: []ring.Shard{{Name: "old", Addr: servers[0].Addr, Weight: 1}}}
	newRing := shard.Config{Shards: []ring.Shard{{Name: "new", Addr: servers[1].Addr, Weight: 1}}}
	migrating := newRing
	migrating.Migration = &shard.Migration{From: &oldRing, Armed: true}
	client := func(cfg shard.Config) *shard.Client {
		c, err := shard.New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	viaMigration, err := client(migrating).Do(ctx, "SET", "fw-key", value, "NX")
	if err := checkFirstWrite("migrating-nx", "fw-key", viaMigration, err); err != nil {
		t.Errorf("a migrating client's SET NX of a key at its old owner: %v", err)
	}
	// A client that never consults the old owner: the NX write succeeds.
	blind, err := client(newRing).Do(ctx, "SET", "fw-blind", value, "NX")
	if err := checkFirstWrite("migrating-nx", "fw-blind", blind, err); err == nil {
		t.Errorf("migrating-nx accepted %#v", blind)
	}
	for _, mode := range []string{"plain", "migrating"} {
		if err := checkFirstWrite(mode, "fw-blind", blind, nil); err != nil {
			t.Errorf("%s: %v", mode, err)
		}
		if err := checkFirstWrite(mode, "fw-key", nil, nil); err == nil {
			t.Errorf("%s accepted a nil reply", mode)
		}
	}
}

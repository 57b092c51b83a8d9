package shard_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/shardis/shardis/shard"
)

// The fence's marker, as the mover sets it on every old node and as
// migrating clients read it (every shard.FencePoll).
func ExampleFenceKey() {
	key := shard.FenceKey("ring-3a", "cluster-9f0e")
	fmt.Println(key, shard.IsFenceKey(key), shard.IsFenceKey("user:1"))

	v := shard.FenceValue(shard.PhaseArmed, time.UnixMilli(1700000000000))
	phase, at, ok := shard.ParseFenceValue(v)
	fmt.Println(v, phase, at.UnixMilli(), ok)
	_, _, ok = shard.ParseFenceValue("armed soon")
	fmt.Println(ok)
	fmt.Println("clients poll every", shard.FencePoll)
	// Output:
	// shardis:migration:ring-3a>cluster true false
	// armed 1700000000000 armed 1700000000000 true
	// false
	// clients poll every 100ms
}

// A command planned by a migration's old topology that the fence's switch
// cut off, or a transaction it refused (that one also matches
// ErrTxAborted), is told apart with errors.Is; running it again plans it
// by the new topology.
func ExampleErrFenceSwitched() {
	err := fmt.Errorf("EXEC: %w", shard.ErrFenceSwitched)
	fmt.Println(errors.Is(err, shard.ErrFenceSwitched), errors.Is(err, shard.ErrMigration))
	// Output:
	// true true
}

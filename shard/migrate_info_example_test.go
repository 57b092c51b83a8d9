package shard_test

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// While a client migrates, Migration tells where it stands in the fence
// and what it did for the migration: here a ring of two shards grows to
// three, and of the keys that move, the first read of one is answered
// where it still is, a plain SET writes it at its new owner without a
// MIGRATE, and an INCR moves it first. extra/shardisprom and
// extra/shardisotel export the same counters.
func ExampleClient_Migration() {
	addrs := redisAddrs(3)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	small := shard.Config{Shards: []ring.Shard{{Name: "a", Addr: addrs[0], Weight: 1}, {Name: "b", Addr: addrs[1], Weight: 1}}}
	big := small
	big.Shards = append(slices.Clone(small.Shards), ring.Shard{Name: "c", Addr: addrs[2], Weight: 1})

	old, err := shard.New(ctx, small)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range 30 {
		if _, err := old.Do(ctx, "SET", fmt.Sprint("visits:", i), 10); err != nil {
			fmt.Println(err)
		}
	}
	old.Close()

	big.Migration = &shard.Migration{From: &small, Armed: true} // Armed: no fence, for a single process
	c, err := shard.New(ctx, big)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	for i := range 30 {
		k := fmt.Sprint("visits:", i)
		switch i % 3 {
		case 0:
			_, err = c.Do(ctx, "GET", k)
		case 1:
			_, err = c.Do(ctx, "SET", k, 0)
		default:
			_, err = c.Do(ctx, "INCR", k)
		}
		if err != nil {
			fmt.Println(err)
		}
	}
	info, _ := c.Migration()
	fmt.Println("phase:", info.Phase)
	fmt.Println("reads at the old owner:", info.OldReads)
	fmt.Println("overwrites:", info.Overwrites)
	fmt.Println("moves:", info.Moves)
	fmt.Println("failures:", info.Failures)
	// Output:
	// phase: armed
	// reads at the old owner: 5
	// overwrites: 3
	// moves: 5
	// failures: 0
}

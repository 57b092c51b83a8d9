package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// Set-ups for the tests of a Scan of a Sentinel shard whose walk crosses
// a change of the shard's master: n keys k0..k(n-1) written, a walk begun
// before the change, and the tally of the keys the walk reported.

// setNumberedKeys writes n keys k0.. (each "v") through c in one pipeline.
func setNumberedKeys(t *testing.T, c *shard.Client, n int) {
	t.Helper()
	p := c.Pipeline()
	for i := range n {
		p.Send("SET", fmt.Sprintf("k%d", i), "v")
	}
	if _, err := p.Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// fillSynced writes n keys k0.. through c and waits until replica holds
// them all.
func fillSynced(t *testing.T, c *shard.Client, replica *redistest.Server, n int) {
	t.Helper()
	setNumberedKeys(t, c, n)
	waitFor(t, 30*time.Second, "the replica to hold every key", func() bool {
		got, err := replica.Do("DBSIZE")
		return err == nil && got == fmt.Sprint(n)
	})
}

// beginScan starts a Scan of c, ten keys a page, and walks it until it
// has reported a quarter of the n keys; it fails the test, saying when,
// if the walk ends or fails first. It returns the Scan and how many
// times it reported each key so far.
func beginScan(t *testing.T, ctx context.Context, c *shard.Client, n int, when string) (*shard.Scanner, map[string]int) {
	t.Helper()
	seen := map[string]int{}
	s := c.Scan(shard.ScanOptions{Count: 10})
	for len(seen) < n/4 && s.Next(ctx) {
		seen[s.Key()]++
	}
	if err := s.Err(); err != nil || len(seen) < n/4 {
		t.Fatalf("%s: %d keys, %v", when, len(seen), err)
	}
	return s, seen
}

// tallyKeys counts the keys of k0..k(n-1) that seen holds no time and
// more than once.
func tallyKeys(seen map[string]int, n int) (missing, twice int) {
	for i := range n {
		switch seen[fmt.Sprintf("k%d", i)] {
		case 0:
			missing++
		case 1:
		default:
			twice++
		}
	}
	return missing, twice
}

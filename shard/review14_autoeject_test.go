package shard_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// flipEjection ejects and restores configured shard i of rr in a loop
// until stop is closed, and reports how many times it flipped.
func flipEjection(rr *shard.RingRouter, i int, stop <-chan struct{}, flips *atomic.Int64, wg *sync.WaitGroup) {
	defer wg.Done()
	for {
		select {
		case <-stop:
			_ = rr.Restore(i)
			return
		default:
		}
		_ = rr.Eject(i)
		_ = rr.Restore(i)
		flips.Add(1)
	}
}

// TestReview14PipelineSeesOneRingAcrossAnEjection: a pipeline that
// writes a key and reads it back must send both to the same shard, even
// when the shard that owns the key leaves or rejoins the ring while the
// pipeline is planned. Each command was placed by the ring of its own
// moment: the SET went to one shard and the GET to another, which
// answered with what it held.
func TestReview14PipelineSeesOneRingAcrossAnEjection(t *testing.T) {
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Health.AutoEject = true
	c := newClient(t, cfg)
	rr := c.Router().(*shard.RingRouter)
	keys := keysByShard(t, c, 1)
	key := keys[servers[1].Addr][0]
	ctx := context.Background()

	stop := make(chan struct{})
	var flips atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go flipEjection(rr, 1, stop, &flips, &wg)
	defer func() { close(stop); wg.Wait() }()

	const cmds = 64 // a long plan, so that ring changes fall inside it
	mismatches := 0
	for round := 0; round < 300; round++ {
		p := c.Pipeline()
		v := fmt.Sprintf("v%d", round)
		p.Send("SET", key, v)
		for range cmds {
			p.Send("GET", key)
		}
		res, err := p.Exec(ctx)
		require.NoError(t, err)
		for j, r := range res[1:] {
			require.NoError(t, r.Err, "command %d of round %d", j+1, round)
			if got, _ := redis.String(r.Reply, nil); got != v {
				mismatches++
				if mismatches == 1 {
					t.Errorf("round %d: GET %d after SET %q in the same pipeline read %q", round, j+1, v, got)
				}
			}
		}
	}
	t.Logf("%d ring changes, %d GETs that missed their pipeline's SET", flips.Load(), mismatches)
	assert.Zero(t, mismatches)
}

// TestReview14TxSeesOneRingAcrossAnEjection: a transaction's own key,
// read with tx.Do while its shard leaves or rejoins the ring, is never
// refused as a key of another shard.
func TestReview14TxSeesOneRingAcrossAnEjection(t *testing.T) {
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Health.AutoEject = true
	c := newClient(t, cfg)
	rr := c.Router().(*shard.RingRouter)
	keys := keysByShard(t, c, 1)
	key := keys[servers[1].Addr][0]
	ctx := context.Background()

	stop := make(chan struct{})
	var flips atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go flipEjection(rr, 1, stop, &flips, &wg)
	defer func() { close(stop); wg.Wait() }()

	crossShard := 0
	for round := 0; round < 300; round++ {
		_, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
			for range 16 {
				if _, err := tx.Do("GET", key); err != nil {
					return err
				}
			}
			return tx.Queue("SET", key, round)
		})
		var cse *shard.CrossShardError
		switch {
		case errors.As(err, &cse):
			crossShard++
			if crossShard == 1 {
				t.Errorf("round %d: %v", round, err)
			}
		case err != nil && !errors.Is(err, shard.ErrTxAborted):
			t.Errorf("round %d: %v", round, err)
		}
	}
	t.Logf("%d ring changes, %d transactions refused their own key", flips.Load(), crossShard)
	assert.Zero(t, crossShard)
}

// TestReview14TxRunsWhereItsKeyLivesAfterARestore: a transaction that
// WATCHed its key on the shard that stood in for an ejected one must not
// EXEC there once the owner is back in the ring: its write would land on
// a shard that no longer serves the key, unseen by every later read, and
// its WATCH guarded nothing (a concurrent transaction on the owner would
// succeed too). It runs again, fn included, on the key's owner.
func TestReview14TxRunsWhereItsKeyLivesAfterARestore(t *testing.T) {
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Health.AutoEject = true
	c := newClient(t, cfg)
	rr := c.Router().(*shard.RingRouter)
	keys := keysByShard(t, c, 1)
	owner := servers[1]
	key := keys[owner.Addr][0]
	ctx := context.Background()

	require.NoError(t, owner.Kill())
	waitFor(t, 20*time.Second, "the dead shard to be ejected", func() bool { return rr.Ejected(1) })
	runs := 0
	_, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
		runs++
		if runs == 1 {
			// The owner comes back while the transaction is on the
			// shard standing in for it.
			if err := owner.Restart(); err != nil {
				return err
			}
			deadline := time.Now().Add(20 * time.Second)
			for rr.Ejected(1) {
				if time.Now().After(deadline) {
					return errors.New("the shard was not restored")
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		return tx.Queue("SET", key, "tx")
	})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, runs, 2, "the run on the stand-in is refused and run again")
	got, err := owner.Do("GET", key)
	require.NoError(t, err)
	assert.Equal(t, "tx", got, "the transaction's write is on the key's owner (fn ran %d times)", runs)
	v, err := redis.String(c.Do(ctx, "GET", key))
	require.NoError(t, err)
	assert.Equal(t, "tx", v, "the client reads the transaction's write")
}

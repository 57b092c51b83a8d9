package reshard_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview11MovedCountsOnlyKeysTheMoverMoved: a client in migration
// mode moves keys on touch while the mover runs; a key it moved after
// the mover's SCAN saw it is skipped by the mover's MIGRATE ... KEYS,
// which still answers OK for the rest of the batch. Report.Moved counted
// such a key as moved by the mover, so the mover and the client together
// counted more moves than there were keys.
func TestReview11MovedCountsOnlyKeysTheMoverMoved(t *testing.T) {
	const n = 3000
	ctx := context.Background()
	servers, from, to := moveAll(t)
	fill(t, from, "touch", n)

	app := to
	f := from
	app.Migration = &shard.Migration{From: &f, Armed: true}
	client := newClient(t, app)

	moving := make(chan struct{})
	var (
		wg       sync.WaitGroup
		rep      *reshard.Report
		moveErr  error
		incrErrs []error
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		var once sync.Once
		rep, moveErr = reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true, KeysPerSecond: 1000,
			Progress: func(p reshard.Progress) {
				if p.Scanned > 0 {
					once.Do(func() { close(moving) })
				}
			}})
		once.Do(func() { close(moving) })
	}()
	go func() { // one key at a time: each of the client's moves carries one key
		defer wg.Done()
		<-moving
		for i := n - 1; i >= 0; i-- {
			if _, err := client.Do(ctx, "INCR", fmt.Sprintf("touch:%d", i)); err != nil {
				incrErrs = append(incrErrs, err)
				if len(incrErrs) > 10 {
					return
				}
			}
		}
	}()
	wg.Wait()
	require.Empty(t, incrErrs)
	require.NoError(t, moveErr)
	info, ok := client.Migration()
	require.True(t, ok)
	t.Logf("the mover moved %d keys, the client %d", rep.Moved, info.Moves)
	require.Positive(t, info.Moves, "the client moved nothing: the test did not race the mover")
	assert.EqualValues(t, n, rep.Moved+info.Moves, "moves counted by the mover (%d) and the client (%d), for %d keys", rep.Moved, info.Moves, n)
	var flowKeys int64
	for _, fl := range rep.Flows {
		flowKeys += fl.Keys
	}
	assert.Equal(t, rep.Moved, flowKeys, "the flows' keys")

	conn, err := redis.Dial("tcp", servers[1].Addr)
	require.NoError(t, err)
	defer conn.Close()
	for i := 0; i < n; i += 500 {
		v, err := redis.Int(conn.Do("GET", fmt.Sprintf("touch:%d", i)))
		require.NoError(t, err)
		assert.Equal(t, i+1, v, "touch:%d", i)
	}
	size, err := redis.Int(conn.Do("DBSIZE"))
	require.NoError(t, err)
	assert.Equal(t, n, size)
}

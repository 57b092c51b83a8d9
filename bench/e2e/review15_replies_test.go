package e2e

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// oneServerTarget is a ring target over one real server.
func oneServerTarget(s *redistest.Server) Target {
	return Target{Name: "ring", Config: ownConfig(shard.Config{Shards: []ring.Shard{{Name: "s1", Addr: s.Addr, Weight: 1}}})}
}

// An MGET whose keys are gone answers nils: those operations are errors,
// not throughput.
func TestReview15MGETOfMissingKeysIsAnError(t *testing.T) {
	srv := redistest.StartNTB(t, 1, redistest.Options{})[0]
	c := Case{Name: "MGET 10", Kind: MGet, Callers: 1, Size: 10}
	flushed := false
	rep, err := Run(context.Background(), []Target{oneServerTarget(srv)}, Options{
		Duration: 100 * time.Millisecond, Cases: []Case{c},
		Progress: func(p Progress) {
			if !flushed { // the case starts: the keys prefill wrote vanish
				flushed = true
				_, ferr := srv.Do("FLUSHALL")
				assert.NoError(t, ferr)
			}
		},
	})
	require.NoError(t, err)
	require.Len(t, rep.Results, 1)
	r := rep.Results[0]
	assert.Zero(t, r.Ops, "MGETs of missing keys counted as done")
	assert.Zero(t, r.Commands)
	assert.Positive(t, r.Errors)
	assert.NotEmpty(t, r.FirstError)
}

// A GET that finds no value (another client removed the key between the
// SET and the GET) is an error.
func TestReview15ReadsThatFindNothingAreErrors(t *testing.T) {
	srv := redistest.StartNTB(t, 1, redistest.Options{})[0]
	for _, c := range []Case{
		{Name: "single c=1", Kind: Single, Callers: 1, Size: 1},
	} {
		t.Run(c.Name, func(t *testing.T) {
			var errs int64
			for attempt := 0; attempt < 20 && errs == 0; attempt++ {
				conn, err := redis.Dial("tcp", srv.Addr)
				require.NoError(t, err)
				var stop atomic.Bool
				var wg sync.WaitGroup
				var flushErr atomic.Value
				wg.Go(func() {
					for !stop.Load() {
						if _, err := conn.Do("FLUSHALL"); err != nil {
							flushErr.Store(err)
							return
						}
					}
				})
				rep, err := Run(context.Background(), []Target{oneServerTarget(srv)},
					Options{Duration: 200 * time.Millisecond, Cases: []Case{c}})
				stop.Store(true)
				wg.Wait()
				conn.Close()
				require.Nil(t, flushErr.Load())
				require.NoError(t, err)
				require.Len(t, rep.Results, 1)
				errs = rep.Results[0].Errors
			}
			assert.Positive(t, errs, "no read of a flushed key was reported as an error")
		})
	}
}

// commands/s counts the commands that were sent: a pipeline of an odd
// size carries that many commands, not one fewer.
func TestReview15PipelineOfOddSizeSendsItsSize(t *testing.T) {
	srv := redistest.StartNTB(t, 1, redistest.Options{})[0]
	c := Case{Name: "pipeline 3", Kind: Pipeline, Callers: 1, Size: 3}
	rep, err := Run(context.Background(), []Target{oneServerTarget(srv)},
		Options{Duration: 200 * time.Millisecond, Cases: []Case{c}})
	require.NoError(t, err)
	require.Len(t, rep.Results, 1)
	r := rep.Results[0]
	require.Positive(t, r.Ops)
	sets, err := srv.CommandCalls("set")
	require.NoError(t, err)
	gets, err := srv.CommandCalls("get")
	require.NoError(t, err)
	served := int64(sets + gets - Keyspace) // less the SETs that wrote the keys first
	// The server ran the warm-up's commands too, so it served at least
	// what the report counts.
	assert.GreaterOrEqual(t, served, r.Commands, "the report counts more commands than the server ran")
	assert.Equal(t, int64(0), served%3, "a pipeline of 3 sent %d commands in all", served)
}

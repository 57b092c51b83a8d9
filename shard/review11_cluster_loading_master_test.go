package shard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview11ClusterLoadingMasterIsWaitedFor: a master that answers
// LOADING (restarted with a big RDB or AOF) runs nothing, so commands,
// pipelines and transactions wait for it within MaxRetryWait, backing
// off, and succeed once it has loaded; when it loads for longer, each
// fails with a *RetryError (ErrRetryBudget) whose last reply, and the
// redis.Error it wraps, is the LOADING.
func TestReview11ClusterLoadingMasterIsWaitedFor(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	ctx := context.Background()
	// Nothing flags the master fail while it loads. No replicas: nothing
	// reads from them.
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{NodeTimeout: time.Minute})
	const budget = time.Second
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.MaxRetryWait = budget
	c := newClient(t, cfg)
	m := rc.Masters()[0]
	key, _ := keyOnMaster(t, rc, m, "review11loading")
	value := func(i int) string { return fmt.Sprintf("%d:%01000d", i, 0) }
	for i := 0; i < 300; i++ {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("%s:%d", key, i), value(i))
		require.NoError(t, err)
	}

	// 300 keys at 15 ms: some 4.5 s of LOADING, the budget four times over.
	probe, reloaded := reloadSlowly(t, m, key, 15*time.Millisecond)
	ops := map[string]func() error{
		"GET": func() error { _, err := c.Do(ctx, "GET", key+":1"); return err },
		"SET": func() error { _, err := c.Do(ctx, "SET", key+":2", "x"); return err },
		"pipeline GET": func() error {
			p := c.Pipeline()
			p.Send("GET", key+":3")
			res, err := p.Exec(ctx)
			if err != nil || len(res) != 1 {
				return fmt.Errorf("Exec: %d results, %w", len(res), err)
			}
			return res[0].Err
		},
		"Tx": func() error {
			_, err := c.Tx(ctx, []string{key + ":4"}, func(tx *shard.Tx) error { return tx.Queue("SET", key+":4", "y") })
			return err
		},
	}
	type outcome struct {
		name string
		err  error
		took time.Duration
	}
	out := make(chan outcome, len(ops))
	for name, op := range ops {
		go func() {
			start := time.Now()
			err := op()
			out <- outcome{name, err, time.Since(start)}
		}()
	}
	var got []outcome
	for range ops {
		got = append(got, <-out)
	}
	_, err := probe.Do("GET", key)
	require.ErrorContains(t, err, "LOADING", "the master was loading throughout")
	for _, o := range got {
		t.Logf("%s: %v after %v", o.name, o.err, o.took)
		var re *shard.RetryError
		require.ErrorAs(t, o.err, &re, o.name)
		require.ErrorIs(t, o.err, shard.ErrRetryBudget, o.name)
		require.Greater(t, re.Attempts, 1, "%s was not sent again", o.name)
		require.Contains(t, re.Last, "LOADING", o.name)
		var reply redis.Error
		require.ErrorAs(t, o.err, &reply, o.name)
		require.True(t, strings.HasPrefix(string(reply), "LOADING"), "%s: %q", o.name, reply)
		require.GreaterOrEqual(t, o.took, budget/2, "%s gave up before waiting", o.name)
		require.Less(t, o.took, budget+3*time.Second, "%s waited past its budget", o.name)
	}
	hurryReload(t, m)
	require.NoError(t, reloaded())

	// With a budget longer than the load, the command waits it out.
	cfg.Cluster.MaxRetryWait = 30 * time.Second
	patient := newClient(t, cfg)
	_, reloaded = reloadSlowly(t, m, key, 5*time.Millisecond) // some 1.5 s
	v, err := redis.String(patient.Do(ctx, "GET", key+":5"))
	require.NoError(t, err, "the master loaded well within MaxRetryWait")
	require.Equal(t, value(5), v)
	require.NoError(t, reloaded())
}

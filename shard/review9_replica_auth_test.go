package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ACL users are per node: a cluster replica that refuses the client's
// credentials (its ACL file not yet rolled out, a password rotated there
// first) is a replica unfit for reads, and the master, another node that
// takes them, serves the read, as it does for a dead or loading replica
// (and as Sentinel mode does for a replica that refuses the login). Reads
// routed there used to fail at once with the replica's *pool.AuthError.
func TestReview9ClusterReadFromAReplicaThatRefusesTheLoginGoesToTheMaster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{Users: []redistest.User{
		{Name: "admin", Password: "admin-pass-0"},
		{Name: "app", Password: "app-pass-1"},
	}})
	m := rc.Masters()[0]
	rep, err := rc.ReplicaOf(m)
	require.NoError(t, err)
	key, _ := keyOnMaster(t, rc, m, "review9auth")

	cfg := clusterConfig(rc.Seeds()...)
	cfg.Pool.Username, cfg.Pool.Password = "app", "app-pass-1"
	cfg.Cluster.ReadFrom = shard.ReadReplicaRandom
	cfg.Health.Interval = -1 // the replica is never marked down: every read goes to it
	for _, auto := range []bool{false, true} {
		name := "pooled"
		if auto {
			name = "auto-pipelined"
		}
		t.Run(name, func(t *testing.T) {
			cfg := cfg
			cfg.DisableAutoPipeline = !auto
			rec := &recorder{}
			cfg.Hooks = rec.hooks()
			c := newClient(t, cfg)
			_, err := c.Do(ctx, "SET", key, "v")
			require.NoError(t, err)
			waitFor(t, 10*time.Second, "the replica to serve the key", func() bool {
				v, err := redis.String(c.Do(ctx, "GET", key))
				return err == nil && v == "v"
			})

			_, err = rep.Do("ACL", "SETUSER", "app", "resetpass", ">other-pass-2")
			require.NoError(t, err)
			t.Cleanup(func() { _, _ = rep.Do("ACL", "SETUSER", "app", "resetpass", ">app-pass-1") })
			_, err = rep.Do("CLIENT", "KILL", "USER", "app")
			require.NoError(t, err)
			for i := range 3 {
				rec.reset()
				v, err := redis.String(c.Do(ctx, "GET", key))
				require.NoError(t, err, "read %d: the master serves it", i)
				assert.Equal(t, "v", v)
				// The hooks see the refused attempt as a retry, then the
				// master's answer.
				got := rec.snapshot()
				require.Len(t, got.commands, 2, "read %d: attempts", i)
				assert.Equal(t, shard.OutcomeRetry, got.commands[0].Outcome, "read %d: the replica's refusal", i)
				assert.Equal(t, shard.OutcomeOK, got.commands[1].Outcome, "read %d: the master's answer", i)
			}
			p := c.Pipeline()
			p.Send("GET", key)
			p.Send("MGET", key, key+"x")
			res, err := p.Exec(ctx)
			require.NoError(t, err)
			require.Len(t, res, 2)
			require.NoError(t, res[0].Err)
			require.NoError(t, res[1].Err)
			assert.Equal(t, []byte("v"), res[0].Reply)
			_, err = rep.Do("ACL", "SETUSER", "app", "resetpass", ">app-pass-1")
			require.NoError(t, err)
		})
	}
	// A write is never sent to a replica: a refusal there cannot touch it,
	// and a refusal by the master itself stays final (no retry fixes it).
	c := newClient(t, cfg)
	_, err = c.Do(ctx, "SET", key, "w")
	require.NoError(t, err)
	_, err = m.Do("ACL", "SETUSER", "app", "resetpass", ">other-pass-3")
	require.NoError(t, err)
	_, err = m.Do("CLIENT", "KILL", "USER", "app")
	require.NoError(t, err)
	_, err = c.Do(ctx, "SET", key, "x")
	assert.ErrorIs(t, err, pool.ErrAuth)
}

// A user whose ACL refuses INFO still reads from replicas: the check that a
// replica has synced (its replication offset, read with INFO replication
// when a read-only connection is dialed) cannot tell, and takes it.
func TestReview9ClusterReplicaReadsOfAUserWithoutInfo(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{Users: []redistest.User{
		{Name: "admin", Password: "admin-pass-0"},
		{Name: "noinfo", Password: "noinfo-pass-4", Rules: "~* &* +@all -info"},
	}})
	m := rc.Masters()[0]
	rep, err := rc.ReplicaOf(m)
	require.NoError(t, err)
	key, _ := keyOnMaster(t, rc, m, "review9noinfo")
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Pool.Username, cfg.Pool.Password = "noinfo", "noinfo-pass-4"
	cfg.Cluster.ReadFrom = shard.ReadReplicaRandom
	c := newClient(t, cfg)
	probe := direct(t, rep.Addr)
	_, err = probe.Do("AUTH", "noinfo", "noinfo-pass-4")
	require.NoError(t, err)
	_, err = probe.Do("INFO", "replication")
	require.ErrorContains(t, err, "NOPERM", "the user may not run INFO")
	_, err = c.Do(ctx, "SET", key, "v")
	require.NoError(t, err)
	// The GETs the replica itself ran, by its own count.
	replicaGets := func() int {
		n, err := rep.CommandCalls("get")
		require.NoError(t, err)
		return n
	}
	before := replicaGets()
	waitFor(t, 10*time.Second, "the replica to serve reads", func() bool {
		v, err := redis.String(c.Do(ctx, "GET", key))
		return err == nil && v == "v" && replicaGets() > before
	})
}

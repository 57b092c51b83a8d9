package shard_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Seeds that cannot give the topology (one dead, one that refuses the
// client's password, one without cluster support) are skipped for the
// first seed that can; when none can, the error names each seed with its
// own cause, matchable with errors.Is / errors.As, and no password.
func TestReview21SeedsThatFailAreSkippedWithTheirCause(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	const pass, other = "r21-seed-pass-1", "r21-seed-other-2"
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{DefaultPassword: pass})
	wrongPass := redistest.StartTB(t, redistest.Options{DefaultPassword: other})
	plain := redistest.StartTB(t, redistest.Options{DefaultPassword: pass})
	deadPort, err := redistest.FreePort()
	require.NoError(t, err)
	dead := "127.0.0.1:" + strconv.Itoa(deadPort)

	cfg := clusterConfig(append([]string{dead, wrongPass.Addr, plain.Addr}, rc.Seeds()[0])...)
	cfg.Pool.Password = pass
	c := newClient(t, cfg)
	ctx := context.Background()
	_, err = c.Do(ctx, "SET", "r21seeds:k", "v")
	require.NoError(t, err)
	assert.Len(t, c.Router().(*shard.ClusterRouter).Table().Masters(), 3)

	cfg.Seeds = []string{dead, wrongPass.Addr, plain.Addr}
	_, err = shard.New(ctx, cfg)
	require.Error(t, err)
	t.Logf("%v", err)
	assert.ErrorIs(t, err, pool.ErrAuth, "the seed that refused the password")
	var ae *pool.AuthError
	assert.ErrorAs(t, err, &ae)
	assert.ErrorIs(t, err, cluster.ErrNotCluster, "the seed without cluster support")
	var de *pool.DialError
	assert.ErrorAs(t, err, &de, "the dead seed")
	seeds := map[string]error{}
	for _, e := range errorTree(err) {
		var se *cluster.SeedError
		if errors.As(e, &se) {
			seeds[se.Seed] = se.Err
		}
	}
	require.Len(t, seeds, 3, "one *cluster.SeedError per seed")
	assert.ErrorIs(t, seeds[wrongPass.Addr], pool.ErrAuth)
	assert.NotErrorIs(t, seeds[wrongPass.Addr], cluster.ErrNotCluster)
	assert.ErrorIs(t, seeds[plain.Addr], cluster.ErrNotCluster)
	assert.NotErrorIs(t, seeds[plain.Addr], pool.ErrAuth)
	assert.ErrorAs(t, seeds[dead], &de)
	assert.NotContains(t, err.Error(), pass)
	assert.NotContains(t, err.Error(), other)
}

// errorTree returns err and every error it wraps, depth first.
func errorTree(err error) []error {
	out := []error{err}
	switch u := err.(type) {
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			out = append(out, errorTree(e)...)
		}
	case interface{ Unwrap() error }:
		if e := u.Unwrap(); e != nil {
			out = append(out, errorTree(e)...)
		}
	}
	return out
}

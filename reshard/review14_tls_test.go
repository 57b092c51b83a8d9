package reshard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const tlsUser, tlsSecret = "mover", "tls-acl-s3cret-14"

// startTLSRing starts three TLS-only servers (one CA) whose only user is
// tlsUser with tlsSecret, and returns them with a ring over the first two
// (from) and one over all three (to), both with the CA, the user and the
// password in their pool options.
func startTLSRing(t *testing.T, args ...string) (servers []*redistest.Server, from, to shard.Config) {
	t.Helper()
	servers = redistest.StartNTB(t, 3, redistest.Options{TLS: true, Args: args,
		Users: []redistest.User{{Name: tlsUser, Password: tlsSecret}}})
	names := []string{"s0", "s1", "s2"}
	from = mustParse(t, ringURL(servers[:2], names[:2], nil))
	to = mustParse(t, ringURL(servers, names, nil))
	for _, c := range []*shard.Config{&from, &to} {
		c.Pool.TLSConfig = servers[0].TLS.ClientConfig()
		c.Pool.Username, c.Pool.Password = tlsUser, tlsSecret
	}
	return servers, from, to
}

// tlsMigratingClient returns an armed client in migration mode from from
// to to, and the keys of a fill of prefix and n that move (by package
// ring's placement). skipProbe arms without probing MIGRATE between the
// servers, which refuses old nodes that cannot reach the new ones.
func tlsMigratingClient(t *testing.T, from, to shard.Config, prefix string, n int, skipProbe bool) (*shard.Client, []string) {
	t.Helper()
	ctx := context.Background()
	c, moving := unarmedMigratingClient(t, from, to, prefix, n)
	require.GreaterOrEqual(t, len(moving), 20, "keys that move")
	// unarmedMigratingClient saw the beacons pass the client check.
	// Arm's own would be exposed to a connection between its AUTH and its
	// CLIENT SETNAME, unnamed there with cmd=auth, which the check does
	// not take for a handshake.
	require.NoError(t, reshard.Arm(ctx, from, to, reshard.ArmOptions{SkipClientCheck: true, SkipProbe: skipProbe}))
	waitArmed(t, c, "the armed fence")
	return c, moving
}

// commandCount returns calls of cmd in INFO commandstats of s (0 when
// never called).
func commandCount(t *testing.T, s *redistest.Server, cmd string) int {
	t.Helper()
	info, err := s.Do("INFO", "commandstats")
	require.NoError(t, err)
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+cmd+":calls="); ok {
			var n int
			_, err := fmt.Sscanf(rest, "%d", &n)
			require.NoError(t, err)
			return n
		}
	}
	return 0
}

// With TLS-only servers that run MIGRATE over TLS (tls-cluster yes) and
// an ACL user with a password, a migrating client's commands on moving
// keys work (GET, SET, INCR, a pipeline, MGET across nodes), the mover
// moves every other moving key with MIGRATE (no DUMP) and the
// verification is clean.
func TestReview14TLSMigrationWithTLSCluster(t *testing.T) {
	ctx := context.Background()
	servers, from, to := startTLSRing(t, "--tls-cluster", "yes")
	c, moving := tlsMigratingClient(t, from, to, "k", 300, false)
	val := func(k string) int {
		var i int
		_, err := fmt.Sscanf(k, "k:%d", &i)
		require.NoError(t, err)
		return i
	}
	// GET, INCR, SET on the first three, a pipeline of INCRs on the next
	// three, MGET on the next three.
	v, err := redis.Int(c.Do(ctx, "GET", moving[0]))
	require.NoError(t, err)
	require.Equal(t, val(moving[0]), v)
	n, err := redis.Int(c.Do(ctx, "INCR", moving[1]))
	require.NoError(t, err)
	require.Equal(t, val(moving[1])+1, n)
	_, err = c.Do(ctx, "SET", moving[2], "set")
	require.NoError(t, err)
	pl := c.Pipeline()
	for _, k := range moving[3:6] {
		pl.Send("INCR", k)
	}
	res, err := pl.Exec(ctx)
	require.NoError(t, err)
	for i, r := range res {
		require.NoError(t, r.Err)
		require.Equal(t, int64(val(moving[3+i])+1), r.Reply)
	}
	vs, err := redis.Ints(c.Do(ctx, "MGET", moving[6], moving[7], moving[8]))
	require.NoError(t, err)
	require.Equal(t, []int{val(moving[6]), val(moving[7]), val(moving[8])}, vs)

	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to})
	require.NoError(t, err)
	// The client moved the keys it wrote (reads need not move them).
	assert.GreaterOrEqual(t, rep.Moved, int64(len(moving)-9))
	assert.Less(t, rep.Moved, int64(len(moving)))
	require.NotNil(t, rep.Verify)
	assert.Zero(t, rep.Verify.Misplaced, "misplaced: %v", rep.Verify.Samples)
	assert.Zero(t, rep.Verify.Pending)
	for _, s := range servers[:2] {
		assert.Zero(t, commandCount(t, s, "dump"), "%s: MIGRATE over TLS needs no DUMP", s.Addr)
	}
	for _, k := range moving[9:] {
		v, err := redis.Int(c.Do(ctx, "GET", k))
		require.NoError(t, err)
		require.Equal(t, val(k), v, k)
	}
}

// Without tls-cluster yes, an old node's MIGRATE dials the new node's
// TLS-only port in plain text and fails with IOERR. A migrating client's
// command on a moving key then fails with a *MigrateError, not sent, that
// says what to do (and gives no password); the mover falls back to
// DUMP/RESTORE, moves every key and verifies clean. (Arm refuses such
// old nodes unless told to skip its probe of MIGRATE:
// TestReview14ArmRefusesOldNodesThatCannotMigrate.)
func TestReview14TLSMigrationWithoutTLSCluster(t *testing.T) {
	ctx := context.Background()
	servers, from, to := startTLSRing(t)
	c, moving := tlsMigratingClient(t, from, to, "k", 300, true)
	_, err := c.Do(ctx, "INCR", moving[0])
	var me *shard.MigrateError
	require.ErrorAs(t, err, &me)
	assert.False(t, me.Sent)
	assert.True(t, errors.Is(err, shard.ErrMigration))
	for _, text := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
		assert.NotContains(t, text, tlsSecret)
	}
	assert.Contains(t, err.Error(), "tls-cluster yes", "the error says how the old nodes reach TLS-only new ones")

	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to})
	require.NoError(t, err)
	assert.Equal(t, int64(len(moving)), rep.Moved)
	require.NotNil(t, rep.Verify)
	assert.Zero(t, rep.Verify.Misplaced, "misplaced: %v", rep.Verify.Samples)
	assert.Zero(t, rep.Verify.Pending)
	assert.Equal(t, len(moving), commandCount(t, servers[2], "restore"), "every key moved with DUMP/RESTORE")
	var i int
	_, err = fmt.Sscanf(moving[0], "k:%d", &i)
	require.NoError(t, err)
	v, err := redis.Int(c.Do(ctx, "INCR", moving[0]))
	require.NoError(t, err)
	require.Equal(t, i+1, v, "the failed INCR was not applied")
}

// The check of CLIENT LIST works over TLS with an ACL user: a process
// that routes by the old topology alone stops the move, and one in
// migration mode does not.
func TestReview14TLSClientCheck(t *testing.T) {
	ctx := context.Background()
	_, from, to := startTLSRing(t, "--tls-cluster", "yes")
	plain := from
	plain.Pool.ClientName = shard.AutoClientName
	stale := newClient(t, plain)
	_, err := stale.Do(ctx, "SET", "k", 1)
	require.NoError(t, err)
	_, err = reshard.Move(ctx, reshard.Options{From: from, To: to})
	var ce *reshard.ClientsError
	require.ErrorAs(t, err, &ce)
	require.NotEmpty(t, ce.Conns)
	assert.Contains(t, ce.Conns[0].Reason, "routes by topology "+shard.TopologyID(from)+" alone")
	assert.NotContains(t, err.Error(), tlsSecret)
	stale.Close()

	c, _ := tlsMigratingClient(t, from, to, "k", 300, false)
	_, err = c.Do(ctx, "GET", "k:1")
	require.NoError(t, err)
	_, err = reshard.Move(ctx, reshard.Options{From: from, To: to, AllowUnnamed: true})
	require.NoError(t, err)
}

// The mover reaches every node with To's pool options: a From with TLS
// while To has none is refused before anything is read. The reverse, a
// From without TLS while To has it, dials the old nodes with TLS (From's
// pool options are To's): old nodes without TLS fail the move with an
// error that names the TLS handshake, and no password.
func TestReview14TLSMismatch(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, from, to := startTLSRing(t)
	plainTo := to
	plainTo.Pool.TLSConfig = nil
	for _, dry := range []bool{true, false} {
		_, err := reshard.Move(ctx, reshard.Options{From: from, To: plainTo, DryRun: dry, SkipClientCheck: true})
		require.ErrorIs(t, err, shard.ErrBadConfig, "dry run %v", dry)
		assert.Contains(t, err.Error(), "TLS")
		assert.NotContains(t, err.Error(), tlsSecret)
	}

	plainServers := redistest.StartNTB(t, 1, redistest.Options{Users: []redistest.User{{Name: tlsUser, Password: tlsSecret}}})
	plainFrom := mustParse(t, ringURL(plainServers, []string{"p0"}, nil))
	plainFrom.Pool.Username, plainFrom.Pool.Password = tlsUser, tlsSecret
	_, err := reshard.Move(ctx, reshard.Options{From: plainFrom, To: to, DryRun: true, SkipClientCheck: true})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "TLS handshake")
	assert.NotContains(t, err.Error(), tlsSecret)
}

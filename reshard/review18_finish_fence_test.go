package reshard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
)

// review18Configs returns the configs of a migration from servers[:2] to
// servers, with named connections, and the migrating config of a process.
func review18Configs(t *testing.T, servers []*redistest.Server) (from, to, migrating shard.Config) {
	t.Helper()
	names := []string{"s0", "s1", "s2"}
	from, to = mustParse(t, ringURL(servers[:2], names[:2], nil)), mustParse(t, ringURL(servers, names, nil))
	from.Pool.ClientName, to.Pool.ClientName = shard.AutoClientName, shard.AutoClientName
	migrating = to
	f := from
	f.Pool.ClientName = ""
	migrating.Migration = &shard.Migration{From: &f}
	return from, to, migrating
}

// listed reports whether CLIENT LIST on every server shows a connection
// of instance.
func listed(t *testing.T, servers []*redistest.Server, instance string) bool {
	t.Helper()
	for _, s := range servers {
		v, err := s.Do("CLIENT", "LIST")
		require.NoError(t, err)
		if !strings.Contains(v, instance) {
			return false
		}
	}
	return true
}

// TestReview18FinishRefusalSaysWhetherAFenceIsUp: Finish refused for a
// process still on the migration with "still use the migration; its
// fence stays" also when no old node held a marker (the migration was
// never armed): there was no fence to stay.
func TestReview18FinishRefusalSaysWhetherAFenceIsUp(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	from, to, migrating := review18Configs(t, servers)
	proc := newClient(t, migrating)
	info, ok := proc.Migration()
	require.True(t, ok)
	key := shard.FenceKey(info.FromID, info.ToID)
	waitFor(t, 10*time.Second, "the process's beacons", func() bool { return listed(t, servers[:2], proc.InstanceID()) })

	_, err := reshard.Finish(ctx, from, to)
	require.ErrorIs(t, err, reshard.ErrStillMigrating)
	assert.Equal(t, []string{"", ""}, markers(t, servers[:2], key), "no marker on the old nodes")
	assert.NotContains(t, err.Error(), "fence stays")
	assert.Contains(t, err.Error(), "no fence is up")

	// Armed: the marker is there, and stays.
	for _, s := range servers[:2] {
		_, err := s.Do("SET", key, shard.FenceValue(shard.PhaseArmed, time.Now()))
		require.NoError(t, err)
	}
	_, err = reshard.Finish(ctx, from, to)
	require.ErrorIs(t, err, reshard.ErrStillMigrating)
	assert.Contains(t, err.Error(), "the fence stays")
	for _, v := range markers(t, servers[:2], key) {
		assert.NotEmpty(t, v, "marker kept")
	}
}

// TestReview18FinishSaysWhenTheFenceCouldNotBePutBack: a process that
// joined the migration while Finish deleted the markers makes Finish put
// them back; when that failed, the error still said "its fence stays"
// although every marker was gone.
func TestReview18FinishSaysWhenTheFenceCouldNotBePutBack(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	from, to, migrating := review18Configs(t, servers)
	// The fence's key, from a client that is gone before Finish looks.
	probe, err := shard.New(ctx, migrating)
	require.NoError(t, err)
	info, _ := probe.Migration()
	gone := probe.InstanceID()
	probe.Close()
	key := shard.FenceKey(info.FromID, info.ToID)
	waitFor(t, 10*time.Second, "the probe's connections to close", func() bool {
		for _, s := range servers[:2] {
			v, err := s.Do("CLIENT", "LIST")
			require.NoError(t, err)
			if strings.Contains(v, gone) {
				return false
			}
		}
		return true
	})
	for _, s := range servers[:2] {
		_, err := s.Do("SET", key, shard.FenceValue(shard.PhaseArmed, time.Now()))
		require.NoError(t, err)
	}

	var (
		proc    *shard.Client
		hookErr error
	)
	reshard.SetTestHookFenceDeleted(func() {
		// A process joins on the migrating config, and the old nodes
		// then refuse SET to the mover's user.
		proc, hookErr = shard.New(ctx, migrating)
		if hookErr != nil {
			return
		}
		deadline := time.Now().Add(10 * time.Second)
		for !listed(t, servers[:2], proc.InstanceID()) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		for _, s := range servers[:2] {
			if _, err := s.Do("ACL", "SETUSER", "default", "-set"); err != nil {
				hookErr = err
			}
		}
	})
	defer reshard.SetTestHookFenceDeleted(nil)
	_, err = reshard.Finish(ctx, from, to)
	reshard.SetTestHookFenceDeleted(nil)
	if proc != nil {
		defer proc.Close()
	}
	require.NoError(t, hookErr)
	require.ErrorIs(t, err, reshard.ErrStillMigrating)
	assert.Contains(t, err.Error(), proc.InstanceID())
	assert.Equal(t, []string{"", ""}, markers(t, servers[:2], key), "the markers are gone")
	assert.NotContains(t, err.Error(), "fence stays", "the error claims a fence that is gone")
	assert.Contains(t, err.Error(), "putting the fence back failed")
	var nerr *shard.NodeError
	assert.True(t, errors.As(err, &nerr), "the failure names the node: %v", err)
}

// TestReview18MoveFinishFailsWhenTheFenceCouldNotBePutBack: the end of a
// Move (Options.Finish) took Finish's refusal for processes that joined
// while the markers were deleted as "the fence stays" (Report.Remaining,
// and the CLI printed "fence kept") also when putting the markers back
// failed: the Move returned no error, and no fence was up.
func TestReview18MoveFinishFailsWhenTheFenceCouldNotBePutBack(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	from, to, migrating := review18Configs(t, servers)
	plain := from
	plain.Pool.ClientName = ""
	fill(t, plain, "r18mv", 50)

	var (
		proc    *shard.Client
		hookErr error
	)
	reshard.SetTestHookFenceDeleted(func() {
		proc, hookErr = shard.New(ctx, migrating)
		if hookErr != nil {
			return
		}
		deadline := time.Now().Add(10 * time.Second)
		for !listed(t, servers[:2], proc.InstanceID()) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		for _, s := range servers[:2] {
			if _, err := s.Do("ACL", "SETUSER", "default", "-set"); err != nil {
				hookErr = err
			}
		}
	})
	defer reshard.SetTestHookFenceDeleted(nil)
	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, Finish: true})
	reshard.SetTestHookFenceDeleted(nil)
	if proc != nil {
		defer proc.Close()
	}
	require.NoError(t, hookErr)
	require.NotNil(t, proc, "the end of the move deleted the markers")
	info, _ := proc.Migration()
	assert.Equal(t, []string{"", ""}, markers(t, servers[:2], shard.FenceKey(info.FromID, info.ToID)), "the markers are gone")
	require.Error(t, err, "no fence is up, and putting it back failed: the move must say so (report: %+v)", rep)
	assert.Contains(t, err.Error(), "putting the fence back failed")
	if rep != nil {
		assert.False(t, rep.Finished)
		assert.Empty(t, rep.Remaining, "Remaining says that the fence stays")
	}
}

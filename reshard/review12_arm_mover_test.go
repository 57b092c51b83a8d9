package reshard_test

import (
	"context"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview12ArmIsRefusedWhileAMoverRuns: `shardis reshard --arm`
// (reshard.Arm) while a mover of the same migration runs is refused with
// ErrMoverAlreadyRunning, naming the mover, as a second full run is. An
// arm beside a running mover raced the mover's finish: the mover deletes
// the marker once no process uses the migration, and an arm that read
// the marker after that set it again, "armed", behind a mover that
// reported the fence cleared; one that overlapped the check made the
// mover keep the fence, naming the arm's connection as a process still on
// the migration. The refused arm changes nothing: the mover moves every
// key once and clears the fence.
func TestReview12ArmIsRefusedWhileAMoverRuns(t *testing.T) {
	const n = 1500
	ctx := context.Background()
	bin := shardisCLI(t) // built before the mover starts
	servers, from, to := moveAll(t)
	fill(t, from, "armrun", n)

	endMover := startRunningMover(t, from, to, "the mover")

	started := time.Now()
	err := reshard.Arm(ctx, from, to, reshard.ArmOptions{})
	took := time.Since(started)
	require.Error(t, err, "--arm went ahead while a mover of the migration was running")
	t.Logf("the arm: %v", err)
	assert.True(t, errors.Is(err, reshard.ErrMoverAlreadyRunning), "%v", err)
	var ce *reshard.ClientsError
	require.ErrorAs(t, err, &ce)
	require.NotEmpty(t, ce.Conns)
	for _, c := range ce.Conns {
		assert.True(t, strings.HasPrefix(c.Name, "shardis-reshard:"), "a connection that is not a mover's: %+v", c)
	}
	assert.Less(t, took, 10*time.Second, "the refusal came late")

	// The CLI's --arm: a non-zero exit status and the reason.
	stdout, stderr, err := runReshardCLI(bin, servers, "--arm")
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "the CLI's --arm: %v\n%s%s", err, stdout, stderr)
	assert.Equal(t, 1, ee.ExitCode(), "%s", stderr)
	assert.Contains(t, stderr, "already running", "%s", stderr)

	r := endMover()
	require.NoError(t, r.err)
	assert.EqualValues(t, n, r.rep.Moved, "the mover's count")
	assert.True(t, r.rep.Finished, "the mover kept the fence (remaining: %+v)", r.rep.Remaining)
	size, err := servers[1].Do("DBSIZE")
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(n), size, "keys at the new node")
	info := migrationIDs(t, from, to)
	for i, s := range servers[:1] {
		v, err := s.Do("EXISTS", shard.FenceKey(info.FromID, info.ToID))
		require.NoError(t, err)
		assert.Equal(t, "0", v, "the marker on old node %d after the finish", i)
	}

	// Once the mover has ended, --arm is not refused as a mover.
	err = reshard.Arm(ctx, from, to, reshard.ArmOptions{SkipClientCheck: true})
	assert.False(t, errors.Is(err, reshard.ErrMoverAlreadyRunning), "an arm after the mover ended: %v", err)
}

// TestReview12MoverIsRefusedWhileAnArmRuns: the other way round, a mover
// started while an arm of its migration waits for the processes'
// acknowledgements is refused with ErrMoverAlreadyRunning at once (the
// arm's connections name the migration as a mover's do), rather than
// arming beside it.
func TestReview12MoverIsRefusedWhileAnArmRuns(t *testing.T) {
	ctx := context.Background()
	servers, from, to := moveAll(t)
	fill(t, from, "armwait", 10)
	// A process on the migration that has not acknowledged the fence: a
	// beacon that keeps its "waiting" name.
	info := migrationIDs(t, from, to)
	beacon, err := redis.Dial("tcp", servers[0].Addr)
	require.NoError(t, err)
	defer beacon.Close()
	name := shard.ClientName{Instance: "review12late", Migrating: true, From: info.FromID, To: info.ToID,
		Phase: shard.PhaseWaiting}.String()
	_, err = beacon.Do("CLIENT", "SETNAME", name)
	require.NoError(t, err)
	armed := make(chan error, 1)
	go func() { armed <- reshard.Arm(ctx, from, to, reshard.ArmOptions{Timeout: 4 * time.Second}) }()
	key := shard.FenceKey(info.FromID, info.ToID)
	waitFor(t, 5*time.Second, "the arm to raise the fence", func() bool {
		v, _ := servers[0].Do("GET", key)
		return strings.HasPrefix(v, "fenced")
	})
	_, err = reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true})
	armErr := <-armed
	t.Logf("the arm: %v", armErr)
	t.Logf("the mover: %v", err)
	assert.True(t, errors.Is(err, reshard.ErrMoverAlreadyRunning), "a mover during an arm: %v", err)
}

// migrationIDs returns the migration from -> to as a migrating client
// names it.
func migrationIDs(t *testing.T, from, to shard.Config) shard.MigrationInfo {
	t.Helper()
	cfg := to
	f := from
	cfg.Migration = &shard.Migration{From: &f, Armed: true}
	c, err := shard.New(context.Background(), cfg)
	require.NoError(t, err)
	defer c.Close()
	info, ok := c.Migration()
	require.True(t, ok)
	return info
}

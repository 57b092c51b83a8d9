package reshard_test

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview11SecondMoverIsRefused: an operator who starts `shardis
// reshard` a second time on a migration whose mover is running (a second
// terminal, a retried cron job) gets a refusal at once, naming the first
// mover's connection, and nothing moves twice. Before, the second mover
// took the first one's beacons for a process still on the migration,
// both moved, and their reports together counted more moves than there
// were keys; the first one kept the fence.
func TestReview11SecondMoverIsRefused(t *testing.T) {
	const n = 1500
	ctx := context.Background()
	bin := shardisCLI(t) // built before the first mover starts
	servers, from, to := moveAll(t)
	fill(t, from, "twice", n)

	endFirst := startRunningMover(t, from, to, "the first mover")

	started := time.Now()
	rep2, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true, Finish: true})
	took := time.Since(started)
	moved2 := int64(0)
	if rep2 != nil {
		moved2 = rep2.Moved
	}
	require.Error(t, err, "a second mover of the same migration ran (it moved %d keys) while the first one was running", moved2)
	t.Logf("the second mover: %v", err)
	assert.True(t, errors.Is(err, reshard.ErrMoverAlreadyRunning), "%v", err)
	var ce *reshard.ClientsError
	require.ErrorAs(t, err, &ce)
	require.NotEmpty(t, ce.Conns)
	for _, c := range ce.Conns {
		assert.True(t, strings.HasPrefix(c.Name, "shardis-reshard:"), "a connection that is not a mover's: %+v", c)
		assert.NotEmpty(t, c.Addr, "the first mover's address")
	}
	assert.Contains(t, err.Error(), ce.Conns[0].Addr, "the refusal names where the first mover runs")
	assert.Contains(t, err.Error(), "already running")
	assert.Equal(t, int64(0), moved2, "the refused mover moved keys")
	assert.Less(t, took, 10*time.Second, "the refusal came late")

	// The clients check (what the CLI runs before its prompt) refuses too.
	err = reshard.CheckClients(ctx, from, to, false)
	assert.True(t, errors.Is(err, reshard.ErrMoverAlreadyRunning), "CheckClients: %v", err)

	// A finish meanwhile keeps the fence, and says why.
	_, err = reshard.Finish(ctx, from, to)
	assert.True(t, errors.Is(err, reshard.ErrStillMigrating), "Finish: %v", err)
	assert.ErrorContains(t, err, "a mover of this migration (shardis reshard), still running")

	// So does the CLI, with a non-zero exit status and the reason.
	stdout, stderr, err := runReshardCLI(bin, servers, "--yes", "--quiet")
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "the CLI's second mover: %v\n%s%s", err, stdout, stderr)
	assert.Equal(t, 1, ee.ExitCode(), "%s", stderr)
	assert.Contains(t, stderr, "already running", "%s", stderr)
	assert.Contains(t, stderr, "shardis-reshard:", "%s", stderr)

	r := endFirst()
	require.NoError(t, r.err)
	assert.EqualValues(t, n, r.rep.Moved, "the first mover's count")
	assert.True(t, r.rep.Finished, "the first mover kept the fence (remaining: %+v)", r.rep.Remaining)
	size, err := servers[1].Do("DBSIZE")
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(n), size, "keys at the new node")
}

// TestReview11KilledMoverDoesNotBlockTheNext: the refusal of a second
// mover must not hold up the run that resumes a mover killed with
// SIGKILL: its connections close with the process.
func TestReview11KilledMoverDoesNotBlockTheNext(t *testing.T) {
	const n = 3000
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	fromURL := ringURL(servers[:1], []string{"s0"}, nil)
	toURL := ringURL(servers[1:], []string{"s1"}, nil)
	fill(t, mustParse(t, fromURL), "killed", n)
	cmd := exec.Command(shardisCLI(t), "reshard", "--from", fromURL, "--to", toURL, "--rate", "500/s", "--yes", "--quiet")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	killed := int64(0)
	for deadline := time.Now().Add(60 * time.Second); killed == 0; {
		size, err := servers[1].Do("DBSIZE")
		require.NoError(t, err)
		killed, err = strconv.ParseInt(size, 10, 64)
		require.NoError(t, err)
		select {
		case err := <-exited:
			t.Fatalf("the mover ended before it was killed: %v\n%s", err, out.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			t.Fatalf("the mover moved nothing in 60 s:\n%s", out.String())
		}
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	err := <-exited
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	require.Equal(t, "signal: killed", ee.Error(), "the mover died of the SIGKILL")
	size, err := servers[1].Do("DBSIZE")
	require.NoError(t, err)
	killed, err = strconv.ParseInt(size, 10, 64)
	require.NoError(t, err)
	require.Less(t, killed, int64(n), "the mover was not killed mid-way")
	t.Logf("the mover was killed after moving %d of %d keys", killed, n)

	rep, err := reshard.Move(context.Background(), reshard.Options{From: mustParse(t, fromURL), To: mustParse(t, toURL), Finish: true})
	require.NoError(t, err, "the run after a killed mover")
	assert.GreaterOrEqual(t, rep.Moved+killed, int64(n), "moved by the two runs")
	assert.LessOrEqual(t, rep.Moved, int64(n)-killed, "moved by the second run")
	assert.True(t, rep.Finished)
	size, err = servers[1].Do("DBSIZE")
	require.NoError(t, err)
	assert.Equal(t, strconv.Itoa(n), size, "keys at the new node")
}

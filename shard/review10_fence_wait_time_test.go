package shard_test

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitingArmed reports whether a goroutine waits for the migration to
// be armed (a command held at the fence).
func waitingArmed() bool {
	buf := make([]byte, 1<<20)
	return strings.Contains(string(buf[:runtime.Stack(buf, true)]), "waitArmed")
}

// TestReview10FenceWaitIsNotInTheAttempt: while the fence is up and not
// armed, a command whose key moves waits for the arming before anything
// is sent. Its attempt (the Command event, the per-node duration
// histograms fed by it) took its start from the operation's, so the
// wait, up to the read timeout, showed as the new owner's latency. The
// attempt starts when its batch is sent; the operation (Op.Start,
// Op.Duration, its span) still covers the wait.
func TestReview10FenceWaitIsNotInTheAttempt(t *testing.T) {
	s := newSwitchSetup(t, 20*time.Second)
	k := s.moving(t, "r10fw", 1)[0]
	type cmdEv struct {
		addr  string
		start time.Time
	}
	var (
		mu   sync.Mutex
		cmds []cmdEv
		ops  []time.Time
	)
	c := s.migrating(t, &shard.Hooks{
		Command: func(_ context.Context, ev *shard.CommandEvent) {
			if ev.Name == "SET" {
				mu.Lock()
				cmds = append(cmds, cmdEv{ev.Node.Addr, ev.Start})
				mu.Unlock()
			}
		},
		Finish: func(_ context.Context, op *shard.Op) {
			if op.Name == "SET" {
				mu.Lock()
				ops = append(ops, op.Start)
				mu.Unlock()
			}
		},
	})
	s.mark(t, c, shard.PhaseFenced)
	waitFor(t, 20*time.Second, "the client to raise the fence", func() bool {
		i, _ := c.Migration()
		return i.Phase == shard.PhaseFenced
	})
	done := make(chan error, 1)
	go func() {
		_, err := c.Do(context.Background(), "SET", k, "v")
		done <- err
	}()
	waitFor(t, 20*time.Second, "the SET to wait at the fence", waitingArmed)
	armedAt := time.Now()
	require.NoError(t, c.ArmMigration())
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the SET never returned")
	}

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, ops, 1)
	assert.True(t, ops[0].Before(armedAt), "the operation began before the arming (it waited)")
	require.NotEmpty(t, cmds)
	last := cmds[len(cmds)-1]
	assert.Equal(t, ringOwner(t, s.to, k), last.addr, "the SET ran at the new owner")
	assert.False(t, last.start.Before(armedAt), "the attempt starts when it is sent, after the arming, not at the operation's start (%v before)", armedAt.Sub(last.start))
}

package shard_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runLog records the operations the hooks began and ended: how many, and
// for each end its commands, failed commands and error.
type runLog struct {
	mu      sync.Mutex
	started int
	ended   []endedRun
}

type endedRun struct {
	name            string
	commands, fails int
	err             error
}

func (l *runLog) hooks() *shard.Hooks {
	return &shard.Hooks{
		Start: func(ctx context.Context, _ *shard.Op) context.Context {
			l.mu.Lock()
			l.started++
			l.mu.Unlock()
			return ctx
		},
		Finish: func(_ context.Context, op *shard.Op) {
			l.mu.Lock()
			l.ended = append(l.ended, endedRun{name: op.Operation(), commands: op.Commands, fails: op.Failed, err: op.Err})
			l.mu.Unlock()
		},
	}
}

// counts returns how many operations began and ended so far.
func (l *runLog) counts() (started, ended int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.started, len(l.ended)
}

// TestReview13ForEachShardFailedConnectionEndsEveryRun: on a connection
// lent to a ForEachShard function, the runs flushed with Flush whose
// replies were not read yet when the connection failed (a Flush that
// could not write, a Receive that could not read) were not ended then:
// only the oldest was, and of its commands only the one being read
// counted as failed, the others as OK. The later runs ended only when
// the function returned, and failed with "given back" (ErrConnClosed)
// instead of the connection's error: a tracing span or a latency metric
// measured the function's whole time and told the wrong cause. Every run
// now ends at the failure, each of its unread commands failed with it.
func TestReview13ForEachShardFailedConnectionEndsEveryRun(t *testing.T) {
	for _, how := range []string{"Flush", "Receive"} {
		t.Run(how, func(t *testing.T) {
			ctx := context.Background()
			servers := redistest.StartNTB(t, 1, redistest.Options{})
			l := &runLog{}
			cfg := ringConfig(servers)
			cfg.Hooks = l.hooks()
			c := newClient(t, cfg)
			var (
				connErr                     error // the failure the function saw
				startedAt, endedAt, flushed int   // counts when it saw it; runs flushed
			)
			err := c.ForEachShard(ctx, func(ctx context.Context, _ shard.Node, conn redis.Conn) error {
				id, err := redis.Int64(conn.Do("CLIENT", "ID"))
				if err != nil {
					return err
				}
				// Two runs of two commands whose replies are not read.
				for range 2 {
					if err := conn.Send("ECHO", "a"); err != nil {
						return err
					}
					if err := conn.Send("ECHO", "b"); err != nil {
						return err
					}
					if err := conn.Flush(); err != nil {
						return err
					}
					flushed++
				}
				if how == "Receive" {
					expired, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
					defer cancel()
					_, connErr = redis.ReceiveContext(conn, expired) // the connection fails
					startedAt, endedAt = l.counts()
					return connErr
				}
				// Closed by the server: a write fails once its reset came.
				if _, err := servers[0].Do("CLIENT", "KILL", "ID", itoa(int(id))); err != nil {
					return err
				}
				deadline := time.Now().Add(10 * time.Second)
				for time.Now().Before(deadline) {
					if err := conn.Send("ECHO", "a"); err != nil {
						return err // not the case looked at
					}
					if err := conn.Send("ECHO", "b"); err != nil {
						return err
					}
					if connErr = conn.Flush(); connErr != nil {
						startedAt, endedAt = l.counts()
						return connErr
					}
					flushed++
				}
				return errors.New("every Flush succeeded on a killed connection")
			})
			require.Error(t, err)
			require.Error(t, connErr, "the function did not see the connection fail: %v", err)
			t.Logf("%d runs flushed; the failure: %v", flushed, connErr)
			wantRuns := 1 + flushed // CLIENT ID and the runs flushed
			if how == "Flush" {
				wantRuns++ // the run whose Flush failed
			}
			assert.Equal(t, wantRuns, startedAt, "runs begun when the connection failed")
			assert.Equal(t, startedAt, endedAt, "runs ended when the connection failed")
			started, _ := l.counts()
			l.mu.Lock()
			defer l.mu.Unlock()
			assert.Equal(t, started, len(l.ended), "every run began was ended")
			require.Len(t, l.ended, wantRuns)
			assert.Equal(t, "CLIENT", l.ended[0].name)
			assert.NoError(t, l.ended[0].err)
			for i, r := range l.ended[1:] {
				assert.Equal(t, "PIPELINE", r.name, "run %d", i+1)
				assert.Equal(t, 2, r.commands, "run %d", i+1)
				assert.Equal(t, 2, r.fails, "run %d: its commands failed", i+1)
				if !errors.Is(r.err, connErr) && (r.err == nil || r.err.Error() != connErr.Error()) {
					t.Errorf("run %d ended with %v, want the connection's failure %v", i+1, r.err, connErr)
				}
				assert.NotErrorIs(t, r.err, shard.ErrConnClosed, "run %d", i+1)
			}
		})
	}
}

package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
)

// TestReview6CloseWhileRetryingIsFailedNotServerError: a command that
// waits out CLUSTERDOWN when the client is closed ends with an error
// wrapping ErrClosed (nothing more is sent). The Finish hook must say
// failed, as OutcomeFailed documents for a closed client; before, the
// CLUSTERDOWN reply that the error also wraps made it server_error, and
// OpenTelemetry's error.type CLUSTERDOWN, as if the server's refusal
// had stood.
func TestReview6CloseWhileRetryingIsFailedNotServerError(t *testing.T) {
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{NodeTimeout: time.Second})
	retried := make(chan struct{}, 1)
	finished := make(chan shard.Op, 1)
	cfg := shard.Config{Mode: shard.ModeCluster, Seeds: rc.Seeds()}
	cfg.Pool = pool.Options{DialTimeout: time.Second, ReadTimeout: time.Second}
	cfg.Health.Interval = -1
	cfg.DisableAutoPipeline = true
	cfg.Cluster.MaxRetryWait = time.Minute
	cfg.Hooks = &shard.Hooks{
		Command: func(_ context.Context, ev *shard.CommandEvent) {
			if ev.Outcome == shard.OutcomeRetry {
				select {
				case retried <- struct{}{}:
				default:
				}
			}
		},
		Finish: func(_ context.Context, op *shard.Op) {
			select {
			case finished <- *op:
			default:
			}
		},
	}
	ctx := context.Background()
	c, err := shard.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })

	const key = "{r6closed}k"
	node, err := c.Router().Route(key)
	if err != nil {
		t.Fatal(err)
	}
	var live, victim *redistest.Server
	for _, m := range rc.Masters() {
		if m.Addr == node.Addr {
			live = m
		} else if victim == nil {
			victim = m
		}
	}
	if live == nil || victim == nil {
		t.Fatalf("masters: %v, %s owns %s", rc.Masters(), node.Addr, key)
	}
	if err := victim.Kill(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the cluster to be down", func() bool {
		info, err := live.Do("CLUSTER", "INFO")
		return err == nil && strings.Contains(info, "cluster_state:fail")
	})

	done := make(chan error, 1)
	go func() {
		_, err := c.Do(ctx, "SET", key, "v")
		done <- err
	}()
	select {
	case <-retried:
	case err := <-done:
		t.Fatalf("SET ended before any retry: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("no CLUSTERDOWN retry seen")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	var doErr error
	select {
	case doErr = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("SET did not end after Close")
	}
	if !errors.Is(doErr, shard.ErrClosed) {
		t.Fatalf("SET = %v, want an error wrapping ErrClosed", doErr)
	}
	var op shard.Op
	select {
	case op = <-finished:
	default:
		t.Fatal("no Finish for the SET")
	}
	if op.Outcome != shard.OutcomeFailed {
		t.Errorf("the operation's outcome is %s (%v), want failed: the client was closed", op.Outcome, op.Err)
	}
}

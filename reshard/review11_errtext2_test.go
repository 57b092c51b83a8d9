package reshard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// TestReview11VerifyErrorTextPrefixOnce: Verify of a migration whose old
// topology cannot be discovered fails with an error that names the
// package once, at its start, keeps its context words and still matches
// the discovery's errors.
func TestReview11VerifyErrorTextPrefixOnce(t *testing.T) {
	redistest.Require(t)
	live := redistest.StartTB(t, redistest.Options{})
	gone := redistest.StartTB(t, redistest.Options{})
	goneAddr := gone.Addr
	if err := gone.Stop(); err != nil {
		t.Fatal(err)
	}
	cfg := shard.Config{
		Shards: []ring.Shard{{Addr: live.Addr, Weight: 1}},
		Pool:   pool.Options{DialTimeout: 2 * time.Second, ReadTimeout: 2 * time.Second},
		Migration: &shard.Migration{
			From: &shard.Config{Mode: shard.ModeCluster, Seeds: []string{goneAddr}},
		},
	}
	_, err := reshard.Verify(context.Background(), cfg, reshard.VerifyOptions{})
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	t.Log(msg)
	if !strings.HasPrefix(msg, "shardis: ") {
		t.Errorf("%q does not start with \"shardis: \"", msg)
	}
	if n := strings.Count(msg, "shardis:"); n != 1 {
		t.Errorf("\"shardis:\" appears %d times in %q, want once", n, msg)
	}
	for _, w := range []string{"migration from: ", "cluster discovery", "seed " + goneAddr + ": dial " + goneAddr} {
		if !strings.Contains(msg, w) {
			t.Errorf("%q lost the context %q", msg, w)
		}
	}
	var de *pool.DialError
	if !errors.As(err, &de) {
		t.Errorf("%q: errors.As does not find the *pool.DialError", msg)
	}
}

package peers

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/bench"
	"github.com/shardis/shardis/internal/redistest"
)

// The steady cluster benchmark flushes the masters between windows; the
// replicas apply the flush later, so the flush waits for them before a
// measured window starts: with a replica stopped it does not report the
// cluster settled, and once it returns every replica is empty.
func TestReview15ClusterFlushWaitsForReplicas(t *testing.T) {
	cl := redistest.StartClusterTB(t, 3, 1, redistest.Options{})
	ctx := context.Background()
	c := newShardisCluster(t, cl.Seeds())
	keys := bench.Keys("rf", 2000)
	write := func() {
		t.Helper()
		if err := bench.Pipelined(ctx, c, keys, value, 500); err != nil {
			t.Fatal(err)
		}
		if err := settleCluster(cl)(); err != nil {
			t.Fatal(err)
		}
	}
	master := cl.Masters()[0]
	replica, err := cl.ReplicaOf(master)
	if err != nil {
		t.Fatal(err)
	}
	dbsize := func(s *redistest.Server) string {
		t.Helper()
		n, err := s.Do("DBSIZE")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}

	write()
	if got, want := dbsize(replica), dbsize(master); got != want || want == "0" {
		t.Fatalf("replica holds %s keys after the writes settled, its master %s", got, want)
	}

	// A stopped replica cannot have applied the masters' flush.
	if err := replica.Pause(); err != nil {
		t.Fatal(err)
	}
	resumed := false
	defer func() {
		if !resumed {
			replica.Resume()
		}
	}()
	if err := flushAll(cl.Masters())(); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	err = replicasCaughtUp(short, cl, cl.Masters())
	cancel()
	if err == nil {
		t.Error("the cluster reported settled while its replica had not applied the flush")
	}
	if err := replica.Resume(); err != nil {
		t.Fatal(err)
	}
	resumed = true
	long, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := replicasCaughtUp(long, cl, cl.Masters()); err != nil {
		t.Fatal(err)
	}
	if got := dbsize(replica); got != "0" {
		t.Errorf("replica holds %s keys once caught up, want 0", got)
	}

	// The benchmark's flush: once it returns, the replica is empty.
	write()
	if err := flushCluster(cl)(); err != nil {
		t.Fatal(err)
	}
	if got := dbsize(replica); got != "0" {
		t.Errorf("replica holds %s keys after the flush returned, want 0", got)
	}
}

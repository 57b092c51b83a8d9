package cluster_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
)

// TestReview11DiscoverErrorTextPrefixOnce: a Dialer that hands out the
// library's pooled connections (as shard.Client's does) and uses up the
// caller's context on the way gets a connection that fails CLUSTER SHARDS
// with the pool's error. Discover's error names the package once, keeps
// its context words, and still matches the context's error and the seed's
// type.
func TestReview11DiscoverErrorTextPrefixOnce(t *testing.T) {
	redistest.Require(t)
	srv := redistest.StartTB(t, redistest.Options{})
	set, err := pool.NewSet(pool.Options{DialTimeout: 2 * time.Second, ReadTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	dial := func(ctx context.Context, addr string) (redis.Conn, error) {
		conn, err := set.Get(context.Background(), addr)
		if err != nil {
			return nil, err
		}
		<-ctx.Done() // a slow dial: the caller's deadline passes meanwhile
		return conn, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = cluster.Discover(ctx, []string{srv.Addr}, dial)
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
	for _, w := range []string{"seed " + srv.Addr + ": ", "CLUSTER SHARDS: context deadline exceeded"} {
		if !strings.Contains(msg, w) {
			t.Errorf("%q lost the context %q", msg, w)
		}
	}
	var se *cluster.SeedError
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &se) || se.Seed != srv.Addr {
		t.Errorf("%q: want errors.Is context.DeadlineExceeded and errors.As *SeedError for %s", msg, srv.Addr)
	}
}

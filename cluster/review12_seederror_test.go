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

// A Dialer that tries a seed's two addresses (the address given and a
// fallback) and fails with both errors joined gives a cause of two lines.
// Discover's error lists one seed a line: the seed's second cause must
// read as part of that seed's error (indented under it), not as another
// seed's error nor as an error of its own, and the package prefix appears
// once.
func TestReview12SeedErrorMultiLineCause(t *testing.T) {
	redistest.Require(t)
	gone := redistest.StartNTB(t, 2, redistest.Options{})
	addrs := []string{gone[0].Addr, gone[1].Addr}
	for _, s := range gone {
		if err := s.Stop(); err != nil {
			t.Fatal(err)
		}
	}
	set, err := pool.NewSet(pool.Options{DialTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	dial := func(ctx context.Context, addr string) (redis.Conn, error) {
		conn, first := set.Get(ctx, addr)
		if first == nil {
			return conn, nil
		}
		conn, fallback := set.Get(ctx, addrs[1])
		if fallback == nil {
			return conn, nil
		}
		return nil, errors.Join(first, fallback)
	}
	_, err = cluster.Discover(context.Background(), addrs[:1], dial)
	if err == nil {
		t.Fatal("Discover succeeded with every address down")
	}
	msg := err.Error()
	t.Logf("%s", msg)
	if n := strings.Count(msg, "shardis:"); n != 1 {
		t.Errorf("\"shardis:\" appears %d times in %q, want once", n, msg)
	}
	lines := strings.Split(msg, "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3 (the heading, the seed, its second cause): %q", len(lines), msg)
	}
	if want := "seed " + addrs[0] + ": "; !strings.HasPrefix(lines[1], want) || !strings.Contains(lines[1], addrs[0]) {
		t.Errorf("line 2 %q, want it to start %q", lines[1], want)
	}
	if !strings.HasPrefix(lines[2], "\t") || !strings.Contains(lines[2], addrs[1]) {
		t.Errorf("line 3 %q, want the fallback's failure indented under the seed", lines[2])
	}
	var se *cluster.SeedError
	if !errors.As(err, &se) || se.Seed != addrs[0] {
		t.Errorf("errors.As finds no *cluster.SeedError of %s", addrs[0])
	}
	var de *pool.DialError
	if !errors.As(err, &de) {
		t.Error("errors.As finds no *pool.DialError")
	}
}

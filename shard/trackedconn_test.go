package shard

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
)

// A lent connection is pooled again after commands that leave it as it
// was (ASKING followed by a command included) and closed after one that
// changed it (an ASKING that nothing followed included).
func TestTrackedConnDecidesRestoreOrClose(t *testing.T) {
	srv := redistest.StartTB(t, redistest.Options{})
	c, err := New(context.Background(), Config{
		Shards: []ring.Shard{{Name: "s0", Addr: srv.Addr, Weight: 1}},
		Pool:   pool.Options{ReadTimeout: time.Second},
		Health: HealthOptions{Interval: -1},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, tc := range []struct {
		name   string
		cmds   [][]any
		closed bool
	}{
		{"GET", [][]any{{"GET", "k"}}, false},
		{"ASKING then GET", [][]any{{"ASKING"}, {"GET", "k"}}, false},
		{"ASKING last", [][]any{{"GET", "k"}, {"ASKING"}}, true},
		{"WATCH", [][]any{{"WATCH", "k"}}, false},
		{"watch exec without multi", [][]any{{"watch", "k"}, {"EXEC"}}, false},
		{"MULTI", [][]any{{"MULTI"}, {"INCR", "k"}}, false},
		{"CLIENT SETNAME", [][]any{{"CLIENT", "SETNAME", "x"}}, true},
		{"SELECT", [][]any{{"SELECT", 1}}, true},
		{"SUBSCRIBE", [][]any{{"SUBSCRIBE", "ch"}}, true},
	} {
		tconn, err := c.borrowTracked(context.Background(), srv.Addr)
		if err != nil {
			t.Fatal(err)
		}
		id, err := redis.Int64(tconn.Do("CLIENT", "ID"))
		if err != nil {
			t.Fatal(err)
		}
		for _, cmd := range tc.cmds {
			_, _ = tconn.Do(cmd[0].(string), cmd[1:]...)
		}
		_ = tconn.release()
		// The next borrower gets the same connection when it was restored,
		// a new one when it was closed, and either way one in the state a
		// fresh one has.
		next, err := c.pools.Get(context.Background(), srv.Addr)
		if err != nil {
			t.Fatal(err)
		}
		info, err := redis.String(next.Do("CLIENT", "INFO"))
		next.Close()
		if err != nil {
			t.Fatalf("%s: next borrower: %v", tc.name, err)
		}
		if reused := strings.Contains(info, fmt.Sprintf("id=%d ", id)); reused == tc.closed {
			t.Errorf("%s: closed = %v, want %v", tc.name, !reused, tc.closed)
		}
		for _, want := range []string{" name= ", " flags=N ", " db=0 ", " sub=0 ", " multi=-1 "} {
			if !strings.Contains(info, want) {
				t.Errorf("%s: next borrower's connection: want %q in %s", tc.name, want, info)
			}
		}
	}
}

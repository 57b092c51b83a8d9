package shard_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMigrationReadsShareTheOldOwnersPipeline: concurrent first reads of
// moving keys are answered at their old owner through its automatic
// pipeline, each transaction whole on the shared connection, beside other
// callers' commands on that node. A command of another caller that fell
// between a MULTI and its EXEC would be queued into the transaction (its
// caller would read QUEUED, the reader a wrong EXEC reply); a read sent on
// a pooled connection of its own would open a connection per concurrent
// caller.
func TestMigrationReadsShareTheOldOwnersPipeline(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	byAddr := serversByAddr(servers)

	// Keys that move from one old owner to one new owner, and keys that
	// stay on that old owner.
	var moving, staying []string
	var oldAddr, newAddr string
	for i := 0; (len(moving) < 64 || len(staying) < 16) && i < 200000; i++ {
		k := fmt.Sprintf("rp:%d", i)
		o, n := ringOwner(t, from, k), ringOwner(t, to, k)
		switch {
		case oldAddr == "" && o != n:
			oldAddr, newAddr = o, n
			moving = append(moving, k)
		case o != n && o == oldAddr && n == newAddr && len(moving) < 64:
			moving = append(moving, k)
		case o == n && o == oldAddr && len(staying) < 16:
			staying = append(staying, k)
		}
	}
	require.Len(t, moving, 64)
	require.Len(t, staying, 16)
	// Every fourth moving key already sits at its new owner (moved by an
	// earlier process): EXISTS counts none at the old owner, the read runs
	// at the new one.
	for i, k := range moving {
		addr := oldAddr
		if i%4 == 0 {
			addr = newAddr
		}
		_, err := byAddr[addr].Do("SET", k, "value-of-"+k)
		require.NoError(t, err)
	}
	migratesBefore := migrateCalls(t, servers)
	connsBefore := connectionsReceived(t, byAddr[oldAddr])

	c := newClient(t, armedConfig(from, to))
	shard.AlwaysPipeline(c)

	const readers, incrementers, rounds = 8, 8, 50
	errs := make(chan error, readers*len(moving)+incrementers*rounds)
	var wg sync.WaitGroup
	for g := range readers {
		wg.Go(func() {
			for j := range moving {
				k := moving[(j+g*8)%len(moving)]
				v, err := redis.String(c.Do(ctx, "GET", k))
				if err != nil || v != "value-of-"+k {
					errs <- fmt.Errorf("GET %s = %q, %v; want %q", k, v, err, "value-of-"+k)
				}
			}
		})
	}
	for g := range incrementers {
		wg.Go(func() {
			for j := range rounds {
				k := staying[(j+g)%len(staying)]
				if _, err := redis.Int64(c.Do(ctx, "INCR", k)); err != nil {
					errs <- fmt.Errorf("INCR %s: %w", k, err)
				}
			}
		})
	}
	wg.Wait()
	conns := connectionsReceived(t, byAddr[oldAddr]) - connsBefore - 1 // the first INFO's own connection
	t.Logf("connections opened at the old owner: %d", conns)
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	total := 0
	for _, k := range staying {
		n, err := byAddr[oldAddr].Do("GET", k)
		require.NoError(t, err)
		var v int
		_, err = fmt.Sscanf(n, "%d", &v)
		require.NoError(t, err, "counter %s", k)
		total += v
	}
	assert.Equal(t, incrementers*rounds, total, "every INCR counted once, at the old owner, outside any transaction")
	for i, k := range moving {
		want := []string{oldAddr}
		if i%4 == 0 {
			want = []string{newAddr}
		}
		assert.Equal(t, want, holders(t, servers, k), "key %s not moved by reads", k)
	}
	assert.Equal(t, migratesBefore, migrateCalls(t, servers), "no MIGRATE for a read")
	// The old owner saw the client's migration beacon and its pipeline's
	// connection, not a connection per concurrent reader (8 to 10 when
	// each read takes a pooled connection). Three more are allowed: on a
	// loaded machine the pipeline may hand its connection back after
	// 100 ms without commands, more than once, and the health check take
	// it meanwhile (4 seen on a loaded 2-core machine).
	assert.LessOrEqual(t, conns, 5, "connections opened at the old owner")
}

// connectionsReceived returns the server's total_connections_received,
// not counting the connection that asks (a fresh one each time).
func connectionsReceived(t *testing.T, s *redistest.Server) int {
	t.Helper()
	info, err := s.Do("INFO", "stats")
	require.NoError(t, err)
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "total_connections_received:"); ok {
			var n int
			_, err := fmt.Sscanf(rest, "%d", &n)
			require.NoError(t, err)
			return n - 1
		}
	}
	t.Fatal("INFO stats has no total_connections_received")
	return 0
}

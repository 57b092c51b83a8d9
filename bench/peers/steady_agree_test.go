package peers

import (
	"context"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
)

// TestSteadyClientsAgree runs each contestant of the steady workload once
// on a few keys, against real servers and against fakeredis, and checks
// that the checks themselves catch a missing key.
func TestSteadyClientsAgree(t *testing.T) {
	ctx := context.Background()
	keys := randomKeys(2 * steadyBatch)
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	addrs := make([]string, len(servers))
	for i, s := range servers {
		addrs[i] = s.Addr
	}
	cl := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	fakeRing := startFakes(t, 3, false)
	fakeCluster := startFakes(t, 3, true)
	f := NewFloor(addrs, 0)
	defer f.Close()
	ff := NewFloor(fakeRing, 0)
	defer ff.Close()

	real := []steadyClient{
		shardisSteady("shardis-ring", newShardis(t, servers)),
		floorSteady(f),
		goRedisSteady("goredis-ring", newGoRedisRing(t, servers)),
		shardisSteady("shardis-cluster", newShardisCluster(t, cl.Seeds())),
		goRedisSteady("goredis-cluster", newGoRedisCluster(t, cl.Seeds())),
		rueidisSteady(newRueidis(t, cl.Seeds())),
	}
	fake := []steadyClient{
		shardisSteady("shardis-ring", newShardisRingAt(t, fakeRing)),
		floorSteady(ff),
		goRedisSteady("goredis-ring", newGoRedisRingAt(t, fakeRing)),
		shardisSteady("shardis-cluster", newShardisCluster(t, fakeCluster)),
		goRedisSteady("goredis-cluster", newGoRedisCluster(t, fakeCluster)),
		rueidisSteady(newRueidis(t, fakeCluster)),
	}
	for _, group := range []struct {
		name    string
		clients []steadyClient
		real    bool
	}{{"redis-server", real, true}, {"fakeredis", fake, false}} {
		for _, sc := range group.clients {
			t.Run(group.name+"/"+sc.name, func(t *testing.T) {
				if group.real {
					// Before any SET, reads must fail the check.
					if err := sc.get(ctx, keys[:steadyBatch]); err == nil {
						t.Fatal("GET of keys nobody wrote passed the check")
					}
					if err := sc.mget(ctx, keys[:steadyBatch]); err == nil {
						t.Fatal("MGET of keys nobody wrote passed the check")
					}
				}
				for start := 0; start < len(keys); start += steadyBatch {
					chunk := keys[start : start+steadyBatch]
					for _, op := range []func(context.Context, []string) error{sc.set, sc.get, sc.mget} {
						if err := op(ctx, chunk); err != nil {
							t.Fatal(err)
						}
					}
				}
			})
			if group.real {
				if err := flushAll(servers)(); err != nil {
					t.Fatal(err)
				}
				if err := flushAll(cl.Masters())(); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

package peers

import (
	"context"
	"fmt"
	"testing"

	"github.com/shardis/shardis/bench"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
)

// The sizes of the cluster workloads.
const (
	pipelineKeys = 100_000 // keys SET then GET per pipeline iteration
	mgetKeys     = 1_000   // keys per MGET
	workers      = 64      // goroutines sending single commands
	perWorker    = 200     // single commands per goroutine per iteration
)

// peerCase is one contender of a benchmark; run does one iteration's work
// and checks every reply.
type peerCase struct {
	name string
	run  func() error
}

// runCases runs each case as a sub-benchmark of b, in order, reporting
// ops/s and cpu-µs/op for opsPerIter operations per iteration. Each case
// runs once untimed first, so that its client has written its keys, learnt
// the topology and opened its connections before the clock starts (b.Loop
// starts the clock); a case that -bench leaves out does not run at all.
func runCases(b *testing.B, opsPerIter int, cases []peerCase) {
	runCasesFor(b, "redis-server", opsPerIter, cases)
}

// runCasesFor is runCases with servers whose command name is server.
func runCasesFor(b *testing.B, server string, opsPerIter int, cases []peerCase) {
	for _, pc := range cases {
		b.Run(pc.name, func(b *testing.B) {
			if err := pc.run(); err != nil {
				b.Fatalf("warm-up: %v", err)
			}
			b.ReportAllocs()
			m := startMeterFor(server)
			for b.Loop() {
				if err := pc.run(); err != nil {
					b.Fatal(err)
				}
			}
			m.report(b, opsPerIter)
		})
	}
}

// peerSetup holds a three-master cluster (no replicas) and three standalone
// servers, started once per benchmark function, with a client of each kind.
type peerSetup struct {
	ctx       context.Context // context.Background()
	cancelCtx context.Context // a context that can be cancelled (never is)
	seeds     []string
	servers   []*redistest.Server
}

func newPeerSetup(tb testing.TB) peerSetup {
	tb.Helper()
	cl := redistest.StartClusterTB(tb, 3, 0, redistest.Options{})
	servers := redistest.StartNTB(tb, 3, redistest.Options{})
	cctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	return peerSetup{ctx: context.Background(), cancelCtx: cctx, seeds: cl.Seeds(), servers: servers}
}

// BenchmarkClusterPipeline writes 100,000 distinct keys with SET and reads
// them back with GET, per iteration, in pipelines of 100 commands spread
// over the three masters of a cluster, through shardis (with
// context.Background() and with a cancellable context), the go-redis v9
// ClusterClient (Pipelined) and rueidis (DoMulti); and through shardis in
// ring mode on three standalone servers. One op is one command.
func BenchmarkClusterPipeline(b *testing.B) {
	s := newPeerSetup(b)
	keys := bench.Keys("user", pipelineKeys)
	sc := newShardisCluster(b, s.seeds)
	g := newGoRedisCluster(b, s.seeds)
	r := newRueidis(b, s.seeds)
	sr := newShardis(b, s.servers)
	name := func(client string) string { return fmt.Sprintf("%s/batch=%d", client, batch) }
	runCases(b, 2*len(keys), []peerCase{
		{name("shardis"), func() error { return bench.Pipelined(s.ctx, sc, keys, value, batch) }},
		{name("shardis-cancelctx"), func() error { return bench.Pipelined(s.cancelCtx, sc, keys, value, batch) }},
		{name("goredis-cluster"), func() error { return goRedisPipelined(s.ctx, g, keys, value, batch) }},
		{name("rueidis"), func() error { return rueidisPipelined(s.ctx, r, keys, value, batch) }},
		{name("shardis-ring"), func() error { return bench.Pipelined(s.ctx, sr, keys, value, batch) }},
	})
}

// BenchmarkClusterMGET reads 1,000 keys of nearly as many hash slots per
// iteration: shardis sends one MGET (split by slot, one pipeline per node),
// the go-redis ClusterClient a pipeline of 1,000 GETs (its MGET refuses
// keys of different slots), rueidis its MGet helper (one MGET per slot in
// one DoMulti); and shardis in ring mode one MGET (split by shard). One op
// is one key.
func BenchmarkClusterMGET(b *testing.B) {
	s := newPeerSetup(b)
	keys := bench.Keys("mget", mgetKeys)
	sc := newShardisCluster(b, s.seeds)
	g := newGoRedisCluster(b, s.seeds)
	r := newRueidis(b, s.seeds)
	sr := newShardis(b, s.servers)
	// The keys exist in both deployments before any read.
	for _, c := range []func() error{
		func() error { return bench.Pipelined(s.ctx, sc, keys, value, batch) },
		func() error { return bench.Pipelined(s.ctx, sr, keys, value, batch) },
	} {
		if err := c(); err != nil {
			b.Fatal(err)
		}
	}
	runCases(b, len(keys), []peerCase{
		{"shardis-mget", func() error { return shardisMGET(s.ctx, sc, keys, len(value)) }},
		{"goredis-cluster-gets", func() error { return goRedisMGET(s.ctx, g, keys, len(value)) }},
		{"rueidis-mget", func() error { return rueidisMGET(s.ctx, r, keys, len(value)) }},
		{"shardis-ring-mget", func() error { return shardisMGET(s.ctx, sr, keys, len(value)) }},
	})
}

// BenchmarkClusterSingle runs 64 goroutines that each send 200 single
// commands per iteration, one at a time, alternating SET and GET on keys of
// their own (12,800 commands per iteration, half SETs), through shardis
// (with context.Background() and with a cancellable context; by default,
// with automatic pipelining, and with pooled connections only), the
// go-redis ClusterClient and rueidis on the cluster, and shardis in ring
// mode. One op is one command.
func BenchmarkClusterSingle(b *testing.B) {
	s := newPeerSetup(b)
	keys := bench.Keys("single", workers*perWorker/2)
	sc := newShardisCluster(b, s.seeds)
	sp := newShardisClusterPooled(b, s.seeds)
	g := newGoRedisCluster(b, s.seeds)
	r := newRueidis(b, s.seeds)
	sr := newShardis(b, s.servers)
	name := func(client string) string { return fmt.Sprintf("%s/goroutines=%d", client, workers) }
	run := func(ctx context.Context, do single) func() error {
		return func() error { return concurrent(ctx, keys, value, workers, perWorker, do) }
	}
	runCases(b, workers*perWorker, []peerCase{
		{name("shardis"), run(s.ctx, shardisSingle(sc))},
		{name("shardis-cancelctx"), run(s.cancelCtx, shardisSingle(sc))},
		{name("shardis-pooled"), run(s.ctx, shardisSingle(sp))},
		{name("shardis-pooled-cancelctx"), run(s.cancelCtx, shardisSingle(sp))},
		{name("goredis-cluster"), run(s.ctx, goRedisSingle(g))},
		{name("rueidis"), run(s.ctx, rueidisSingle(r))},
		{name("shardis-ring"), run(s.ctx, shardisSingle(sr))},
	})
}

// BenchmarkClusterLoneCaller is BenchmarkClusterSingle with one goroutine
// (2,000 commands per iteration): the latency of a caller that has a node
// to itself, where automatic pipelining has nothing to batch. One op is
// one command.
func BenchmarkClusterLoneCaller(b *testing.B) {
	s := newPeerSetup(b)
	keys := bench.Keys("lone", loneCommands/2)
	sc := newShardisCluster(b, s.seeds)
	sp := newShardisClusterPooled(b, s.seeds)
	g := newGoRedisCluster(b, s.seeds)
	r := newRueidis(b, s.seeds)
	run := func(do single) func() error {
		return func() error { return concurrent(s.ctx, keys, value, 1, loneCommands, do) }
	}
	runCases(b, loneCommands, []peerCase{
		{"shardis", run(shardisSingle(sc))},
		{"shardis-pooled", run(shardisSingle(sp))},
		{"goredis-cluster", run(goRedisSingle(g))},
		{"rueidis", run(rueidisSingle(r))},
	})
}

// loneCommands is the number of commands per iteration of
// BenchmarkClusterLoneCaller.
const loneCommands = 2_000

// TestClusterWorkloadsAgree runs every cluster workload once, on few keys,
// through each client, and checks that the workloads do what the
// benchmarks claim: the keys reach every master, and the MGET keys span
// nearly as many hash slots as there are keys.
func TestClusterWorkloadsAgree(t *testing.T) {
	cl := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	ctx := context.Background()
	seeds := cl.Seeds()
	sc := newShardisCluster(t, seeds)
	g := newGoRedisCluster(t, seeds)
	r := newRueidis(t, seeds)

	keys := bench.Keys("agree", 300)
	slots := map[int]bool{}
	for _, k := range keys {
		slots[cluster.Slot(k)] = true
	}
	if len(slots) < len(keys)*9/10 {
		t.Fatalf("%d keys fall into only %d slots: an MGET of them would not be cross-slot", len(keys), len(slots))
	}
	tests := []struct {
		name string
		run  func() error
	}{
		{"shardis pipeline", func() error { return bench.Pipelined(ctx, sc, keys, value, batch) }},
		{"go-redis pipeline", func() error { return goRedisPipelined(ctx, g, keys, value, batch) }},
		{"rueidis pipeline", func() error { return rueidisPipelined(ctx, r, keys, value, batch) }},
		{"shardis MGET", func() error { return shardisMGET(ctx, sc, keys, len(value)) }},
		{"go-redis GETs", func() error { return goRedisMGET(ctx, g, keys, len(value)) }},
		{"rueidis MGet", func() error { return rueidisMGET(ctx, r, keys, len(value)) }},
		{"shardis single", func() error { return concurrent(ctx, keys, value, 8, 20, shardisSingle(sc)) }},
		{"go-redis single", func() error { return concurrent(ctx, keys, value, 8, 20, goRedisSingle(g)) }},
		{"rueidis single", func() error { return concurrent(ctx, keys, value, 8, 20, rueidisSingle(r)) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.run(); err != nil {
				t.Fatal(err)
			}
		})
	}
	for _, m := range cl.Masters() {
		n, err := m.Do("DBSIZE")
		if err != nil {
			t.Fatal(err)
		}
		if n == "0" {
			t.Errorf("master %s holds no key", m.Addr)
		}
	}
}

// TestMGETWorkloadsCatchMissingKeys checks that each MGET workload fails
// when a key has no value, so that a client answering nils cannot pass
// the benchmark's checks.
func TestMGETWorkloadsCatchMissingKeys(t *testing.T) {
	cl := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	ctx := context.Background()
	seeds := cl.Seeds()
	sc := newShardisCluster(t, seeds)
	g := newGoRedisCluster(t, seeds)
	r := newRueidis(t, seeds)
	keys := bench.Keys("missing", 50)
	if err := bench.Pipelined(ctx, sc, keys[:49], value, batch); err != nil {
		t.Fatal(err)
	}
	for name, run := range map[string]func() error{
		"shardis":  func() error { return shardisMGET(ctx, sc, keys, len(value)) },
		"go-redis": func() error { return goRedisMGET(ctx, g, keys, len(value)) },
		"rueidis":  func() error { return rueidisMGET(ctx, r, keys, len(value)) },
	} {
		if err := run(); err == nil {
			t.Errorf("%s: MGET of a missing key passed the check", name)
		}
	}
}

package bench

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// envInt reads a positive integer from the environment, or def.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// dataset writes keys to one server and returns their count and the bytes
// of keys and values together.
type dataset func(conn redis.Conn) (keys int, bytes int64, err error)

// smallKeys is n keys of 16-byte values.
func smallKeys(n int) dataset {
	return func(conn redis.Conn) (int, int64, error) {
		var size int64
		for i := 0; i < n; i++ {
			k := "small:" + strconv.Itoa(i)
			size += int64(len(k) + len(value))
			conn.Send("SET", k, value)
			if i%1000 == 999 {
				if err := drain(conn, 1000); err != nil {
					return 0, 0, err
				}
			}
		}
		return n, size, drain(conn, n%1000)
	}
}

// mixedValues is about mb megabytes of keys: strings of 100 B (60% of the
// keys), 4 KiB (25%) and 64 KiB (5%), and hashes of 20 fields of 100 B
// (10%), from a fixed seed.
func mixedValues(mb int) dataset {
	return func(conn redis.Conn) (int, int64, error) {
		rng := rand.New(rand.NewPCG(1, 2))
		var (
			size    int64
			n       int
			pending int
		)
		blob := strings.Repeat("x", 64<<10)
		for size < int64(mb)<<20 {
			k := "mixed:" + strconv.Itoa(n)
			n++
			switch r := rng.IntN(100); {
			case r < 5:
				conn.Send("SET", k, blob)
				size += int64(len(k) + len(blob))
			case r < 30:
				conn.Send("SET", k, blob[:4096])
				size += int64(len(k) + 4096)
			case r < 90:
				conn.Send("SET", k, blob[:100])
				size += int64(len(k) + 100)
			default:
				args := []any{k}
				for f := 0; f < 20; f++ {
					args = append(args, f, blob[:100])
					size += 100 + 2
				}
				conn.Send("HSET", args...)
				size += int64(len(k))
			}
			pending++
			if pending == 200 {
				if err := drain(conn, pending); err != nil {
					return 0, 0, err
				}
				pending = 0
			}
		}
		return n, size, drain(conn, pending)
	}
}

func drain(conn redis.Conn, n int) error {
	if err := conn.Flush(); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		if _, err := conn.Receive(); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkReshardMover moves one standalone server's keys into a
// three-master Redis Cluster twice on the same data, side by side: with
// the shardis mover (reshard.Move: SCAN, batched MIGRATE ... KEYS, each
// old node in parallel) and with the server's own tool, redis-cli
// --cluster import --cluster-copy (SCAN and one MIGRATE per key). Run it
// once per data set:
//
//	go test ./bench -run '^$' -bench BenchmarkReshardMover -benchtime 1x -timeout 60m
//
// SHARDIS_BENCH_RESHARD_KEYS (1,000,000) and SHARDIS_BENCH_RESHARD_MB
// (1024) size the two data sets.
func BenchmarkReshardMover(b *testing.B) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		b.Fatal("redis-cli is needed as the baseline: ", err)
	}
	sets := []struct {
		name string
		data dataset
	}{
		{fmt.Sprintf("small-%d", envInt("SHARDIS_BENCH_RESHARD_KEYS", 1_000_000)), smallKeys(envInt("SHARDIS_BENCH_RESHARD_KEYS", 1_000_000))},
		{fmt.Sprintf("mixed-%dMB", envInt("SHARDIS_BENCH_RESHARD_MB", 1024)), mixedValues(envInt("SHARDIS_BENCH_RESHARD_MB", 1024))},
	}
	src := redistest.StartTB(b, redistest.Options{})
	cl := redistest.StartClusterTB(b, 3, 0, redistest.Options{})
	ctx := context.Background()
	from := shard.Config{Shards: []ring.Shard{{Addr: src.Addr, Weight: 1}}}
	to := shard.Config{Mode: shard.ModeCluster, Seeds: cl.Seeds()}
	load := func(d dataset) (int, int64) {
		for _, s := range append([]*redistest.Server{src}, cl.Masters()...) {
			if _, err := s.Do("FLUSHALL"); err != nil {
				b.Fatal(err)
			}
		}
		conn, err := redis.Dial("tcp", src.Addr)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		n, size, err := d(conn)
		if err != nil {
			b.Fatal(err)
		}
		return n, size
	}
	// one moves (or copies) the loaded data once with a tool and returns
	// the elapsed time, the tool's CPU and the servers' CPU.
	type run struct{ wall, cpu, srv time.Duration }
	own := func(b *testing.B, n int) run {
		srv := ChildrenCPU("redis-server") // before the tool's clock: the scan of /proc is not the tool's
		cpu, start := ProcessCPU(), time.Now()
		rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true, SkipVerify: true,
			Batch: envInt("SHARDIS_BENCH_RESHARD_BATCH", 0), Dump: os.Getenv("SHARDIS_BENCH_RESHARD_DUMP") != ""})
		r := run{time.Since(start), ProcessCPU() - cpu, ChildrenCPU("redis-server") - srv}
		if err != nil {
			b.Fatal(err)
		}
		if rep.Moved != int64(n) {
			b.Fatalf("moved %d of %d keys", rep.Moved, n)
		}
		return r
	}
	redisCLI := func(b *testing.B, n int) run {
		srv, start := ChildrenCPU("redis-server"), time.Now()
		cmd := exec.Command(cli, "--cluster", "import", cl.Seeds()[0], "--cluster-from", src.Addr, "--cluster-copy")
		cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
		if err := cmd.Run(); err != nil {
			b.Fatal("redis-cli --cluster import: ", err)
		}
		r := run{time.Since(start), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), ChildrenCPU("redis-server") - srv}
		var copied int
		for _, m := range cl.Masters() {
			s, err := m.Do("DBSIZE")
			if err != nil {
				b.Fatal(err)
			}
			k, _ := strconv.Atoi(s)
			copied += k
		}
		if copied != n {
			b.Fatalf("redis-cli copied %d of %d keys", copied, n)
		}
		return r
	}
	// SHARDIS_BENCH_RESHARD_ROUNDS=2 runs shardis, redis-cli, redis-cli,
	// shardis, so that a change of the machine's load weighs on both.
	rounds := envInt("SHARDIS_BENCH_RESHARD_ROUNDS", 1)
	for _, set := range sets {
		b.Run(set.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				var mine, theirs run
				var n int
				var size int64
				for r := 0; r < rounds; r++ {
					order := []bool{true, false} // true: shardis
					if r%2 == 1 {
						order = []bool{false, true}
					}
					for _, shardis := range order {
						n, size = load(set.data)
						var got run
						if shardis {
							got = own(b, n)
							mine.wall, mine.cpu, mine.srv = mine.wall+got.wall, mine.cpu+got.cpu, mine.srv+got.srv
						} else {
							got = redisCLI(b, n)
							theirs.wall, theirs.cpu, theirs.srv = theirs.wall+got.wall, theirs.cpu+got.cpu, theirs.srv+got.srv
						}
					}
				}
				keys := float64(n) * float64(rounds)
				mb := float64(size) / (1 << 20) * float64(rounds)
				perKey := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / keys }
				b.ReportMetric(keys/mine.wall.Seconds(), "shardis-keys/s")
				b.ReportMetric(mb/mine.wall.Seconds(), "shardis-MB/s")
				b.ReportMetric(perKey(mine.cpu), "shardis-cpu-µs/key")
				b.ReportMetric(perKey(mine.srv), "shardis-srv-µs/key")
				b.ReportMetric(keys/theirs.wall.Seconds(), "rediscli-keys/s")
				b.ReportMetric(mb/theirs.wall.Seconds(), "rediscli-MB/s")
				b.ReportMetric(perKey(theirs.cpu), "rediscli-cpu-µs/key")
				b.ReportMetric(perKey(theirs.srv), "rediscli-srv-µs/key")
				b.ReportMetric(theirs.wall.Seconds()/mine.wall.Seconds(), "speedup")
				b.Logf("%s: %d keys, %.0f MB, %d round(s): shardis %v, redis-cli %v", set.name, n, mb/float64(rounds), rounds,
					mine.wall.Round(time.Millisecond), theirs.wall.Round(time.Millisecond))
				b.StartTimer()
			}
		})
	}
}

// BenchmarkMigrationClient measures, in one run on a 3 -> 4 ring of
// 900,000 keys, what migration mode costs the application:
//
//   - before/during: 8 goroutines using keys that move and 8 reading keys
//     that stay, at the same time, first with a client on the old ring,
//     then with a migrating client while the mover runs (paced at 5,000
//     keys/s). Each use of a moving key is its first. Twice: once reading
//     the moving keys (GET: answered at the old owner, no MIGRATE), once
//     writing them (SET: a blind overwrite, written at the new owner and
//     the old copy deleted, two round trips);
//   - staying keys alone: 16 goroutines reading keys that stay, with the
//     client on the old ring before the migration, then with the
//     migrating client while the mover runs (staying-alone-ratio): what
//     the migration itself costs the keys that stay, without the extra
//     work of moving keys beside them; and, alternated with the latter,
//     the same reads through a client on the new ring, so that the
//     mover's own cost (staying-mover-only-ratio) and migration mode's
//     (staying-mode-beside-mover-ratio) show apart;
//   - idle cost: 16 goroutines reading keys that stay, with a client on the
//     new ring and with a migrating client (no mover), alternated, four
//     phases each: the ratio of their throughput (idle-mode-ratio) and of
//     their CPU per read, the client's and the servers' (idle-mode-cpu-ratio).
//
// Run it with:
//
//	go test ./bench -run '^$' -bench BenchmarkMigrationClient -benchtime 1x
func BenchmarkMigrationClient(b *testing.B) {
	g := newRingGrowth(b)
	servers, from, to := g.servers, g.from, g.to
	ctx := context.Background()
	const n = 900_000
	const phase = 2 * time.Second
	const pace = 5000 // keys/s the mover moves during the measurement
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		for _, s := range servers {
			if _, err := s.Do("FLUSHALL"); err != nil {
				b.Fatal(err)
			}
		}
		old, err := shard.New(ctx, from)
		if err != nil {
			b.Fatal(err)
		}
		keys := Keys("mc", n)
		if err := Pipelined(ctx, old, keys, value, 1000); err != nil {
			b.Fatal(err)
		}
		var moving, staying []string
		for _, k := range keys {
			if g.moves(k) {
				moving = append(moving, k)
			} else {
				staying = append(staying, k)
			}
		}
		third := len(moving) / 3
		br := readBoth(ctx, b, old, "GET", moving[:third], staying, phase, true)
		bw := readBoth(ctx, b, old, "SET", moving[:third], staying, phase, true)
		var aloneBefore, aloneDuring, moverOnly idleLoad
		aloneBefore.add(ctx, b, old, staying, phase)
		old.Close()

		mcfg := to
		f := from
		mcfg.Migration = &shard.Migration{From: &f, Armed: true} // moves at once, as after the fence
		mig, err := shard.New(ctx, mcfg)
		if err != nil {
			b.Fatal(err)
		}
		moverDone := make(chan error, 1)
		go func() {
			_, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true, SkipVerify: true,
				KeysPerSecond: pace})
			moverDone <- err
		}()
		dr := readBoth(ctx, b, mig, "GET", moving[third:2*third], staying, phase, false)
		dw := readBoth(ctx, b, mig, "SET", moving[2*third:], staying, phase, false)
		// The same reads through a client on the new ring (keys that stay
		// are where both rings put them), alternated with the migrating
		// client: what the mover alone costs them, and what migration mode
		// adds.
		plain, err := shard.New(ctx, to)
		if err != nil {
			b.Fatal(err)
		}
		for round := 0; round < 2; round++ {
			if round == 1 {
				moverOnly.add(ctx, b, plain, staying, phase)
			}
			aloneDuring.add(ctx, b, mig, staying, phase)
			if round == 0 {
				moverOnly.add(ctx, b, plain, staying, phase)
			}
		}
		select {
		case err := <-moverDone:
			b.Fatalf("the mover ended (%v) before the staying keys' phase did: pace it slower", err)
		default:
		}
		moverStart := time.Now()
		if err := <-moverDone; err != nil {
			b.Fatal(err)
		}
		b.Logf("the mover ran %v after the reads", time.Since(moverStart).Round(time.Millisecond))

		// plain, migrating, migrating, plain, twice: drift cancels. CPU
		// per op (the client's and the servers') is what migration mode
		// costs; throughput on two saturated cores follows it.
		var plainIdle, migIdle idleLoad
		for round := 0; round < 4; round++ {
			if round%2 == 0 {
				plainIdle.add(ctx, b, plain, staying, phase)
			}
			migIdle.add(ctx, b, mig, staying, phase)
			if round%2 == 1 {
				plainIdle.add(ctx, b, plain, staying, phase)
			}
		}
		plain.Close()
		mig.Close()
		b.ReportMetric(br.move, "before-moving-read-ops/s")
		b.ReportMetric(dr.move, "during-moving-read-ops/s")
		b.ReportMetric(dr.move/br.move, "moving-read-ratio")
		b.ReportMetric(bw.move, "before-moving-write-ops/s")
		b.ReportMetric(dw.move, "during-moving-write-ops/s")
		b.ReportMetric(dw.move/bw.move, "moving-write-ratio")
		b.ReportMetric(br.stay, "before-staying-ops/s")
		b.ReportMetric(dr.stay, "during-staying-ops/s")
		b.ReportMetric(dr.stay/br.stay, "staying-ratio")
		b.ReportMetric(dw.stay/bw.stay, "staying-ratio-with-writes")
		b.ReportMetric(aloneDuring.rate()/aloneBefore.rate(), "staying-alone-ratio")
		b.ReportMetric(aloneDuring.cpuPerOp()/aloneBefore.cpuPerOp(), "staying-alone-cpu-ratio")
		b.ReportMetric(moverOnly.rate()/aloneBefore.rate(), "staying-mover-only-ratio")
		b.ReportMetric(aloneDuring.rate()/moverOnly.rate(), "staying-mode-beside-mover-ratio")
		b.ReportMetric(moverOnly.cpuPerOp()/aloneBefore.cpuPerOp(), "staying-mover-only-cpu-ratio")
		for _, p := range []struct {
			name string
			r    phaseResult
		}{{"before-read", br}, {"during-read", dr}, {"before-write", bw}, {"during-write", dw}} {
			b.ReportMetric(p.r.cliUs, p.name+"-client-cpu-µs/op")
			b.ReportMetric(p.r.srvUs, p.name+"-server-cpu-µs/op")
		}
		b.ReportMetric(migIdle.rate()/plainIdle.rate(), "idle-mode-ratio")
		b.ReportMetric(migIdle.cpuPerOp()/plainIdle.cpuPerOp(), "idle-mode-cpu-ratio")
		b.Logf("moving keys %d, staying %d", len(moving), len(staying))
		b.StartTimer()
	}
}

// readBoth runs 8 goroutines using moving keys with cmd, GET or SET (each
// key once, in order; from the start again when wrap and they run out)
// and 8 reading staying keys (at random) for d, and returns the ops/s of
// each group. Without wrap, the phase ends early when a goroutine runs
// out of moving keys (a key's first use is what is measured), and the
// rates are over the time it lasted.
func readBoth(ctx context.Context, b *testing.B, c *shard.Client, cmd string, moving, staying []string, d time.Duration, wrap bool) phaseResult {
	var mOps, sOps atomic.Int64
	srv0 := ChildrenCPU("redis-server") // before the client's clock: the scan of /proc is not the client's
	cli0 := ProcessCPU()
	var failed failures
	var ranOut atomic.Bool
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	running := func() bool { return !ranOut.Load() && time.Now().Before(deadline) }
	for g := 0; g < 8; g++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := g; running(); i += 8 {
				if i >= len(moving) {
					if !wrap {
						ranOut.Store(true)
						return
					}
					i = g
				}
				var r any
				var err error
				if cmd == "SET" {
					r, err = c.Do(ctx, "SET", moving[i], value)
				} else {
					r, err = c.Do(ctx, "GET", moving[i])
				}
				if err := CheckReply(cmd, r, err, len(value)); err != nil {
					failed.fail(err)
					continue
				}
				mOps.Add(1)
			}
		}()
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			for running() {
				r, err := c.Do(ctx, "GET", staying[rng.IntN(len(staying))])
				if err := CheckReply("GET", r, err, len(value)); err != nil {
					failed.fail(err)
					continue
				}
				sOps.Add(1)
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	failed.check(b)
	if took < d/2 {
		b.Fatalf("the moving keys ran out after %v of %v: make the data set larger", took, d)
	}
	if ranOut.Load() {
		b.Logf("%s: the moving keys ran out after %v", cmd, took.Round(time.Millisecond))
	}
	ops := float64(mOps.Load() + sOps.Load())
	return phaseResult{
		move:  float64(mOps.Load()) / took.Seconds(),
		stay:  float64(sOps.Load()) / took.Seconds(),
		cliUs: float64((ProcessCPU() - cli0).Microseconds()) / ops,
		srvUs: float64((ChildrenCPU("redis-server") - srv0).Microseconds()) / ops,
	}
}

// phaseResult is one phase of BenchmarkMigrationClient: the ops/s of the
// two groups, and the CPU time per op (both groups) of this process (the
// client, and the mover when it runs) and of the redis-servers.
type phaseResult struct {
	move, stay   float64
	cliUs, srvUs float64
}

// idleLoad sums the reads of staying keys of one kind of phase (16
// goroutines each), and the CPU (this process's and the redis-servers')
// they took.
type idleLoad struct {
	ops  float64
	secs float64
	cpu  time.Duration
}

func (l *idleLoad) add(ctx context.Context, b *testing.B, c *shard.Client, keys []string, d time.Duration) {
	srv := ChildrenCPU("redis-server") // before the client's clock: the scan of /proc is not the client's
	cli := ProcessCPU()
	l.ops += readOnly(ctx, b, c, keys, 16, d) * d.Seconds()
	l.secs += d.Seconds()
	l.cpu += ProcessCPU() - cli + ChildrenCPU("redis-server") - srv
}

func (l *idleLoad) cpuPerOp() float64 { return float64(l.cpu) / l.ops }

// rate is the phases' reads per second.
func (l *idleLoad) rate() float64 { return l.ops / l.secs }

// readOnly runs g goroutines reading keys at random for d; ops/s.
func readOnly(ctx context.Context, b *testing.B, c *shard.Client, keys []string, g int, d time.Duration) float64 {
	var ops atomic.Int64
	var failed failures
	var wg sync.WaitGroup
	deadline := time.Now().Add(d)
	for i := 0; i < g; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 9))
			for time.Now().Before(deadline) {
				r, err := c.Do(ctx, "GET", keys[rng.IntN(len(keys))])
				if err := CheckReply("GET", r, err, len(value)); err != nil {
					failed.fail(err)
					continue
				}
				ops.Add(1)
			}
		}()
	}
	wg.Wait()
	failed.check(b)
	return float64(ops.Load()) / d.Seconds()
}

// failures counts the commands of concurrent goroutines that failed or
// did not answer what the workload wrote (a GET that found no value), and
// keeps the first error.
type failures struct {
	n     atomic.Int64
	once  sync.Once
	first error
}

func (f *failures) fail(err error) {
	f.once.Do(func() { f.first = err })
	f.n.Add(1)
}

// check fails b when a command failed; call it after the goroutines
// ended.
func (f *failures) check(b *testing.B) {
	if n := f.n.Load(); n > 0 {
		b.Fatalf("%d commands failed, the first: %v", n, f.first)
	}
}

package peers

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"
	"github.com/shardis/shardis/bench"
	"github.com/shardis/shardis/extra/shardisotel"
	"github.com/shardis/shardis/shard"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// What an observed client costs: the same cluster workloads as
// BenchmarkClusterPipeline and BenchmarkClusterSingle through clients
// with no hooks, with hooks that do nothing, with OpenTelemetry over the
// API's no-op providers, and with OpenTelemetry recording every span to
// an in-memory exporter through the SDK's batching span processor
// (emptied after each iteration) and every
// measurement to a manual reader. go-redis with redisotel the same way;
// rueidis without instrumentation as the reference (rueidisotel is not
// served by the module proxy this was written against).

// telemetry is one way of observing a client.
type telemetry int

const (
	noTelemetry telemetry = iota
	noopHooks
	otelNoop
	otelSDK
)

var telemetryNames = [...]string{"none", "noop-hooks", "otel-noop", "otel-sdk"}

// observed is a client of each kind, observed one way, plus what the
// benchmark must do after each iteration.
type observed struct {
	shardis *shard.Client
	goredis *redis.ClusterClient
	after   func()
}

// newObserved creates a shardis cluster client and a go-redis
// ClusterClient on seeds, observed as tel says.
func newObserved(tb testing.TB, seeds []string, tel telemetry) observed {
	tb.Helper()
	cfg := shard.Config{Mode: shard.ModeCluster, Seeds: seeds}
	o := observed{after: func() {}}
	g := redis.NewClusterClient(&redis.ClusterOptions{Addrs: seeds})
	tb.Cleanup(func() { g.Close() })
	switch tel {
	case noopHooks:
		cfg.Hooks = &shard.Hooks{
			Start:    func(ctx context.Context, _ *shard.Op) context.Context { return ctx },
			Finish:   func(context.Context, *shard.Op) {},
			Command:  func(context.Context, *shard.CommandEvent) {},
			Pipeline: func(context.Context, *shard.PipelineEvent) {},
		}
		g.AddHook(noopGoRedisHook{})
	case otelNoop, otelSDK:
		var (
			tp  = tracenoopProvider()
			mp  = metricnoop.NewMeterProvider()
			opt []shardisotel.Option
		)
		if tel == otelSDK {
			exp := tracetest.NewInMemoryExporter()
			stp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
			smp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
			tb.Cleanup(func() {
				stp.Shutdown(context.Background())
				smp.Shutdown(context.Background())
			})
			opt = []shardisotel.Option{shardisotel.WithTracerProvider(stp), shardisotel.WithMeterProvider(smp)}
			o.after = exp.Reset
			if err := redisotel.InstrumentTracing(g, redisotel.WithTracerProvider(stp)); err != nil {
				tb.Fatal(err)
			}
			if err := redisotel.InstrumentMetrics(g, redisotel.WithMeterProvider(smp)); err != nil {
				tb.Fatal(err)
			}
		} else {
			opt = []shardisotel.Option{shardisotel.WithTracerProvider(tp), shardisotel.WithMeterProvider(mp)}
			if err := redisotel.InstrumentTracing(g, redisotel.WithTracerProvider(tp)); err != nil {
				tb.Fatal(err)
			}
			if err := redisotel.InstrumentMetrics(g, redisotel.WithMeterProvider(mp)); err != nil {
				tb.Fatal(err)
			}
		}
		in, err := shardisotel.Instrument(&cfg, opt...)
		if err != nil {
			tb.Fatal(err)
		}
		o.shardis = newShardisClusterConfig(tb, cfg)
		reg, err := in.Observe(o.shardis)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { reg.Unregister() })
		o.goredis = g
		return o
	}
	o.shardis = newShardisClusterConfig(tb, cfg)
	o.goredis = g
	return o
}

func tracenoopProvider() tracenoop.TracerProvider { return tracenoop.NewTracerProvider() }

// noopGoRedisHook is a go-redis hook that only calls on.
type noopGoRedisHook struct{}

func (noopGoRedisHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (noopGoRedisHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { return next(ctx, cmd) }
}
func (noopGoRedisHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { return next(ctx, cmds) }
}

// observedCases returns the shardis cases, one per way of observing, then
// the go-redis cases: the contenders whose ratios matter run next to each
// other (run the benchmark with -count to interleave the repetitions).
func observedCases(tb testing.TB, seeds []string, mk func(o observed) (sh, gr func() error)) []peerCase {
	var shardisCases, goredisCases []peerCase
	for tel := noTelemetry; tel <= otelSDK; tel++ {
		o := newObserved(tb, seeds, tel)
		sh, gr := mk(o)
		after := o.after
		shardisCases = append(shardisCases, peerCase{"shardis/" + telemetryNames[tel], func() error { err := sh(); after(); return err }})
		goredisCases = append(goredisCases, peerCase{"goredis-cluster/" + telemetryNames[tel], func() error { err := gr(); after(); return err }})
	}
	return append(shardisCases, goredisCases...)
}

// BenchmarkObservedPipeline is BenchmarkClusterPipeline (100,000 SETs then
// GETs in pipelines of 100 on a three-master cluster) for each way of
// observing the clients. One op is one command.
func BenchmarkObservedPipeline(b *testing.B) {
	s := newPeerSetup(b)
	keys := bench.Keys("user", pipelineKeys)
	cases := observedCases(b, s.seeds, func(o observed) (func() error, func() error) {
		return func() error { return bench.Pipelined(s.ctx, o.shardis, keys, value, batch) },
			func() error { return goRedisPipelined(s.ctx, o.goredis, keys, value, batch) }
	})
	r := newRueidis(b, s.seeds)
	cases = append(cases, peerCase{"rueidis/none", func() error { return rueidisPipelined(s.ctx, r, keys, value, batch) }})
	for i := range cases {
		cases[i].name = fmt.Sprintf("%s/batch=%d", cases[i].name, batch)
	}
	runCases(b, 2*len(keys), cases)
}

// BenchmarkObservedSingle is BenchmarkClusterSingle (64 goroutines, 200
// single commands each per iteration, SET and GET alternating) for each
// way of observing the clients. One op is one command.
func BenchmarkObservedSingle(b *testing.B) {
	s := newPeerSetup(b)
	keys := bench.Keys("single", workers*perWorker/2)
	cases := observedCases(b, s.seeds, func(o observed) (func() error, func() error) {
		return func() error { return concurrent(s.ctx, keys, value, workers, perWorker, shardisSingle(o.shardis)) },
			func() error { return concurrent(s.ctx, keys, value, workers, perWorker, goRedisSingle(o.goredis)) }
	})
	r := newRueidis(b, s.seeds)
	cases = append(cases, peerCase{"rueidis/none", func() error {
		return concurrent(s.ctx, keys, value, workers, perWorker, rueidisSingle(r))
	}})
	for i := range cases {
		cases[i].name = fmt.Sprintf("%s/goroutines=%d", cases[i].name, workers)
	}
	runCases(b, workers*perWorker, cases)
}

// TestObservedClientsWork runs each observed client once on a few keys:
// the instrumentation must not change any reply.
func TestObservedClientsWork(t *testing.T) {
	s := newPeerSetup(t)
	keys := bench.Keys("observed", 300)
	for tel := noTelemetry; tel <= otelSDK; tel++ {
		o := newObserved(t, s.seeds, tel)
		if err := bench.Pipelined(s.ctx, o.shardis, keys, value, batch); err != nil {
			t.Errorf("shardis/%s pipelined: %v", telemetryNames[tel], err)
		}
		if err := goRedisPipelined(s.ctx, o.goredis, keys, value, batch); err != nil {
			t.Errorf("goredis/%s pipelined: %v", telemetryNames[tel], err)
		}
		if err := concurrent(s.ctx, keys, value, 8, 20, shardisSingle(o.shardis)); err != nil {
			t.Errorf("shardis/%s single: %v", telemetryNames[tel], err)
		}
		if err := concurrent(s.ctx, keys, value, 8, 20, goRedisSingle(o.goredis)); err != nil {
			t.Errorf("goredis/%s single: %v", telemetryNames[tel], err)
		}
	}
}

// BenchmarkObservedRatios measures the cost of each way of observing as
// ratios to the same client without hooks, on a machine whose load
// drifts: every iteration is one round in which every contender runs the
// same short workload (5,000 SETs and GETs in pipelines of 100, then 64
// goroutines sending 50 single commands each), in an order that rotates
// from round to round; a round's ratio compares contenders that ran
// seconds apart. It reports, per contender, the median over the rounds of
// its wall time and of this process's CPU time divided by those of the
// same client without hooks (1.02 = 2% slower); run it with
// -benchtime=40x or more.
func BenchmarkObservedRatios(b *testing.B) {
	s := newPeerSetup(b)
	pipeKeys := bench.Keys("ratio", 5_000)
	singleKeys := bench.Keys("ratio-single", 64*50/2)
	type contender struct {
		client string
		tel    telemetry
		pipe   func() error
		single func() error
		after  func()
	}
	var cs []contender
	for tel := noTelemetry; tel <= otelSDK; tel++ {
		o := newObserved(b, s.seeds, tel)
		cs = append(cs,
			contender{"shardis", tel,
				func() error { return bench.Pipelined(s.ctx, o.shardis, pipeKeys, value, batch) },
				func() error { return concurrent(s.ctx, singleKeys, value, 64, 50, shardisSingle(o.shardis)) }, o.after},
			contender{"goredis", tel,
				func() error { return goRedisPipelined(s.ctx, o.goredis, pipeKeys, value, batch) },
				func() error { return concurrent(s.ctx, singleKeys, value, 64, 50, goRedisSingle(o.goredis)) }, o.after})
	}
	type sample struct{ wall, cpu time.Duration }
	measure := func(run func() error, after func()) sample {
		cpu0, t0 := bench.ProcessCPU(), time.Now()
		if err := run(); err != nil {
			b.Fatal(err)
		}
		sm := sample{time.Since(t0), bench.ProcessCPU() - cpu0}
		after()
		return sm
	}
	workloads := []string{"pipeline", "single"}
	// ratios[workload][contender index] holds one ratio per round.
	wallRatios := make([][][]float64, 2)
	cpuRatios := make([][][]float64, 2)
	for w := range workloads {
		wallRatios[w] = make([][]float64, len(cs))
		cpuRatios[w] = make([][]float64, len(cs))
	}
	for _, c := range cs { // warm up: keys written, topology known, connections open
		measure(c.pipe, c.after)
		measure(c.single, c.after)
	}
	round := 0
	for b.Loop() {
		for w := range workloads {
			got := make([]sample, len(cs))
			for k := range cs {
				i := (k + round) % len(cs)
				run := cs[i].pipe
				if w == 1 {
					run = cs[i].single
				}
				got[i] = measure(run, cs[i].after)
			}
			for i, c := range cs {
				base := got[i%2] // the same client's "none" contender
				if c.client != cs[i%2].client {
					b.Fatalf("contender order: %s vs %s", c.client, cs[i%2].client)
				}
				wallRatios[w][i] = append(wallRatios[w][i], float64(got[i].wall)/float64(base.wall))
				if base.cpu > 0 {
					cpuRatios[w][i] = append(cpuRatios[w][i], float64(got[i].cpu)/float64(base.cpu))
				}
			}
		}
		round++
	}
	for w, name := range workloads {
		for i, c := range cs {
			if c.tel == noTelemetry {
				continue
			}
			label := fmt.Sprintf("%s-%s-%s", name, c.client, telemetryNames[c.tel])
			b.ReportMetric(median(wallRatios[w][i]), label+"-wall/none")
			b.ReportMetric(median(cpuRatios[w][i]), label+"-cpu/none")
		}
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

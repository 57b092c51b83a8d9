package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/hashtag"
	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

func init() {
	register(command{name: "demo", summary: "write keys through the sharded client and show where they went", run: runDemo})
}

const demoUsage = `Usage: shardis demo [--config FILE] [--keys N] [--batch N]

Writes --keys keys through the sharded client, in pipelines of --batch
commands, then shows how many each shard holds and where a few keys live.
Without --config it starts three embedded in-process servers, and then also
stops one and reads keys back, to show what a failed shard does. With
--config (a config file or a redis-ring:// or redis-cluster:// URL) it WRITES
its keys (demo:user:0, demo:user:1, ...) to those servers and stops none.

Flags:
`

func runDemo(ctx context.Context, env *cliEnv, args []string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), demoUsage)
		fs.PrintDefaults()
	}
	configFile := fs.String("config", "", "YAML or JSON client config file, or a redis-ring:// or redis-cluster:// URL; without it the demo starts three embedded servers")
	keys := fs.Int("keys", 100000, "how many keys to write")
	batch := fs.Int("batch", 1000, "commands per pipeline")
	if err := parseFlags(env, fs, args, true); err != nil {
		return err
	}
	if *keys <= 0 || *batch <= 0 {
		return fmt.Errorf("%w: --keys and --batch must be positive", errUsage)
	}
	out := env.stdout

	var (
		cfg      shard.Config
		embedded []*miniredis.Miniredis
	)
	if *configFile != "" {
		var err error
		if cfg, err = loadTopology(*configFile); err != nil {
			return err
		}
		fmt.Fprintf(out, "Using %s\n", cfg)
	} else {
		fmt.Fprintln(out, "No --config given: starting three embedded in-process Redis servers (miniredis).")
		for _, name := range []string{"shard-a", "shard-b", "shard-c"} {
			m := miniredis.NewMiniRedis()
			if err := m.StartAddr("127.0.0.1:0"); err != nil {
				return errtext.Errorf("start embedded server: %w", err)
			}
			defer m.Close()
			embedded = append(embedded, m)
			cfg.Shards = append(cfg.Shards, ring.Shard{Name: name, Addr: m.Addr(), Weight: 1})
		}
		cfg.Health = shard.HealthOptions{Interval: 100 * time.Millisecond, FailureLimit: 1, Timeout: 200 * time.Millisecond}
		cfg.Pool = pool.Options{DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second}
		for _, s := range cfg.Shards {
			fmt.Fprintf(out, "  %s at %s\n", s.Name, s.Addr)
		}
	}
	client, err := shard.New(ctx, cfg)
	if err != nil {
		return err
	}
	defer client.Close()

	// 1. Write the keys through pipelines.
	fmt.Fprintf(out, "\nWriting %d keys in pipelines of %d commands:\n", *keys, *batch)
	bar := newProgress(env.stderr, "SET", *keys)
	start := time.Now()
	p := client.Pipeline()
	failed := 0
	var firstErr error
	for i := 0; i < *keys; i += *batch {
		n := min(*batch, *keys-i)
		for j := i; j < i+n; j++ {
			p.Send("SET", demoKey(j), j)
		}
		res, err := p.Exec(ctx)
		if err != nil {
			bar.stop()
			return err
		}
		for _, r := range res {
			if r.Err != nil {
				if failed == 0 {
					firstErr = r.Err
				}
				failed++
			}
		}
		bar.set(i + n)
	}
	elapsed := time.Since(start)
	wrote := fmt.Sprint(*keys)
	if failed > 0 {
		wrote = fmt.Sprintf("%d of %d", *keys-failed, *keys)
	}
	fmt.Fprintf(out, "Wrote %s keys in %v: %.0f SET/s (%d failed)\n", wrote, elapsed.Round(time.Millisecond),
		float64(*keys)/elapsed.Seconds(), failed)
	// The demo goes on, to show where the keys that were written went;
	// its exit status then says that not all of them were.
	var writeErr error
	if failed > 0 {
		writeErr = errtext.Errorf("%d of %d SETs failed, the first with: %w", failed, *keys, firstErr)
	}

	// 2. Where did they go?
	fmt.Fprintln(out, "\nKeys per shard (DBSIZE):")
	nodes := client.Nodes()
	sizes := make([]int, len(nodes))
	labels := make([]string, len(nodes))
	err = client.ForEachShard(ctx, func(ctx context.Context, n shard.Node, conn redis.Conn) error {
		size, err := redis.Int(redis.DoContext(conn, ctx, "DBSIZE"))
		for i := range nodes {
			if nodes[i].Addr == n.Addr {
				sizes[i] = size
			}
		}
		return err
	})
	if err != nil {
		return err
	}
	for i, n := range nodes {
		labels[i] = n.String()
	}
	barChart(out, labels, sizes)

	fmt.Fprintln(out, "\nWhere a few keys live:")
	samples := []string{demoKey(0), demoKey(1), demoKey(42), "{user:1000}.followers", "{user:1000}.following"}
	for _, k := range samples {
		n, err := client.Router().Route(k)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  %-24s -> %s\n", k, n)
	}
	fmt.Fprintln(out, "  "+tagNote(cfg, samples[3], samples[4]))

	// 3. One shard fails: only its keys fail.
	if writeErr != nil && len(embedded) > 0 {
		return writeErr // the failure demo below needs every key written
	}
	if len(embedded) == 0 {
		fmt.Fprintln(out, "\nSkipping the failure demo: it stops a server, which it does only with embedded servers.")
		return writeErr
	}
	victim := nodes[1]
	fmt.Fprintf(out, "\nStopping %s; reading 1000 keys back:\n", victim)
	embedded[1].Close()
	time.Sleep(300 * time.Millisecond) // let the health checks notice
	for j := 0; j < 1000; j++ {
		p.Send("GET", demoKey(j))
	}
	res, err := p.Exec(ctx)
	if err != nil {
		return err
	}
	owners := make([]shard.Node, 1000)
	for j := range owners {
		if owners[j], err = client.Router().Route(demoKey(j)); err != nil {
			return err
		}
	}
	rb := checkReadBack(res, owners, victim, *keys)
	for _, n := range nodes {
		fmt.Fprintf(out, "  %-10s ok %4d  failed %4d\n", n, rb.ok[n.String()], rb.failed[n.String()])
	}
	if rb.sampleErr != nil {
		fmt.Fprintf(out, "  a failed command's error: %v\n", rb.sampleErr)
	}
	if rb.wrong != nil {
		return errtext.Errorf("the read-back after stopping %s went wrong: %w", victim, rb.wrong)
	}
	fmt.Fprintln(out, "Only the stopped shard's keys failed; the others kept serving, every value as written.")
	return nil
}

func demoKey(i int) string { return fmt.Sprintf("demo:user:%d", i) }

// readBack is what the failure demo's reads found, per node.
type readBack struct {
	ok, failed map[string]int
	sampleErr  error // a failed read's error, as a user would see it
	wrong      error // the first read that did not behave as the demo says
}

// checkReadBack checks the replies of GET demoKey(j) for j in order, whose
// owners are given, after victim was stopped and keys keys were written
// (each demoKey(j) set to j): every key of victim fails with a
// *shard.NodeError, every other key reads its value (nil when it was
// never written).
func checkReadBack(res []shard.Result, owners []shard.Node, victim shard.Node, keys int) readBack {
	rb := readBack{ok: make(map[string]int), failed: make(map[string]int)}
	for j, r := range res {
		if j >= len(owners) {
			rb.wrong = fmt.Errorf("%d replies for %d keys", len(res), len(owners))
			break
		}
		n := owners[j]
		if r.Err != nil {
			rb.failed[n.String()]++
			var ne *shard.NodeError
			isNodeErr := errors.As(r.Err, &ne)
			if rb.sampleErr == nil && isNodeErr {
				rb.sampleErr = r.Err
			}
			if rb.wrong == nil && (n.Addr != victim.Addr || !isNodeErr) {
				rb.wrong = errtext.Errorf("GET %s on %s failed: %w", demoKey(j), n, r.Err)
			}
			continue
		}
		rb.ok[n.String()]++
		if rb.wrong != nil {
			continue
		}
		if n.Addr == victim.Addr {
			rb.wrong = fmt.Errorf("GET %s succeeded on the stopped %s", demoKey(j), n)
			continue
		}
		want := ""
		if j < keys {
			want = strconv.Itoa(j)
		}
		got, err := redis.String(r.Reply, nil)
		if errors.Is(err, redis.ErrNil) {
			got, err = "", nil
		}
		if err != nil || got != want {
			rb.wrong = fmt.Errorf("GET %s on %s read %q, want %q", demoKey(j), n, got, want)
		}
	}
	if rb.wrong == nil && len(res) != len(owners) {
		rb.wrong = fmt.Errorf("%d replies for %d keys", len(res), len(owners))
	}
	return rb
}

// tagNote explains the placement of two keys that share a {tag}: they
// share a shard only under a tag rule that hashes the part in braces
// (cluster mode, or a ring with tag: cluster), not under "none" (the
// default of the jedis and twemproxy placements) or another pair.
func tagNote(cfg shard.Config, a, b string) string {
	rule := "cluster" // Redis Cluster's own rule
	if cfg.Mode != shard.ModeCluster {
		if cfg.Router != nil {
			return "(a Router places keys by its own rules)"
		}
		r, err := ring.New(cfg.RingConfig())
		if err != nil {
			return ""
		}
		rule = r.Config().Tag // the algorithm's default filled in
	}
	if t, err := hashtag.Parse(rule); err == nil && t.Tag(a) == t.Tag(b) {
		return "(keys with the same {tag} always share a shard)"
	}
	return fmt.Sprintf("(with tag: %s the {...} part is no hash tag: these keys are placed independently; tag: cluster keeps them together)", rule)
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

func init() {
	register(command{name: "demo", summary: "write keys through the sharded client and show where they went", run: runDemo})
}

func runDemo(ctx context.Context, env *cliEnv, args []string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	configFile := fs.String("config", "", "YAML or JSON client config; without it the demo starts three embedded servers")
	keys := fs.Int("keys", 100000, "how many keys to write")
	batch := fs.Int("batch", 1000, "commands per pipeline")
	if err := parseFlags(fs, args, true); err != nil {
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
		if cfg, err = shard.LoadConfig(*configFile); err != nil {
			return err
		}
		fmt.Fprintf(out, "Using %s\n", cfg)
	} else {
		fmt.Fprintln(out, "No --config given: starting three embedded in-process Redis servers (miniredis).")
		for _, name := range []string{"shard-a", "shard-b", "shard-c"} {
			m := miniredis.NewMiniRedis()
			if err := m.StartAddr("127.0.0.1:0"); err != nil {
				return fmt.Errorf("start embedded server: %w", err)
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
		writeErr = fmt.Errorf("%d of %d SETs failed, the first with: %w", failed, *keys, firstErr)
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
	fmt.Fprintln(out, "  (keys with the same {tag} always share a shard)")

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
	okPer := make(map[string]int)
	failPer := make(map[string]int)
	var sampleErr error
	for j := 0; j < 1000; j++ {
		p.Send("GET", demoKey(j))
	}
	res, err := p.Exec(ctx)
	if err != nil {
		return err
	}
	for j, r := range res {
		n, _ := client.Router().Route(demoKey(j))
		if r.Err != nil {
			failPer[n.String()]++
			var ne *shard.NodeError
			if sampleErr == nil && errors.As(r.Err, &ne) {
				sampleErr = r.Err
			}
			continue
		}
		okPer[n.String()]++
	}
	for _, n := range nodes {
		fmt.Fprintf(out, "  %-10s ok %4d  failed %4d\n", n, okPer[n.String()], failPer[n.String()])
	}
	if sampleErr != nil {
		fmt.Fprintf(out, "  a failed command's error: %v\n", sampleErr)
	}
	fmt.Fprintln(out, "Only the stopped shard's keys failed; the others kept serving.")
	return nil
}

func demoKey(i int) string { return fmt.Sprintf("demo:user:%d", i) }

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/shard"
)

func init() {
	register(command{name: "stats", summary: "run a short probe workload and print the client's per-node counters", run: runStats})
}

// probeTTL is the expiry of the keys the probe workload writes.
const probeTTL = 60 * time.Second

const statsUsage = `Usage: shardis stats --config FILE [--ops N] [--prefix P] [--no-probe]
       [--json] [--watch [--interval D] [--count N]]

Connects with the client's YAML or JSON config (or a redis-ring:// or
redis-cluster:// URL), runs a short probe workload
and prints the client's counters for every node. A node's STATE is "down"
when the health checks marked it down or it did not answer a PING sent just
before printing.

The probe WRITES to your servers: --ops keys named PREFIX0, PREFIX1, ...
(default "shardis:stats:0" ...), each SET with a TTL of 60 seconds (EX 60),
then read back with GET. They expire by themselves; --no-probe (or --ops 0)
writes nothing and shows only what connecting and discovery did. A flag
the others make meaningless (--interval or --count without --watch, --ops
with --no-probe, --prefix without a probe) is a usage error.

Exit status: 0 when every probe command succeeded, 1 when one failed (the
counters are printed all the same; with --watch, one in any refresh) or the
client could not start, 2 for a usage error or a config that cannot be
read, parsed or used.

Flags:
`

func runStats(ctx context.Context, env *cliEnv, args []string) error {
	fs := flag.NewFlagSet("stats", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), statsUsage)
		fs.PrintDefaults()
	}
	configFile := fs.String("config", "", "YAML or JSON client config file, or a redis-ring:// or redis-cluster:// URL")
	ops := fs.Int("ops", 1000, "SET+GET pairs of the probe workload; each SET writes a key with a 60s TTL (0 = none)")
	prefix := fs.String("prefix", "shardis:stats:", "key prefix of the probe workload")
	noProbe := fs.Bool("no-probe", false, "write nothing: skip the probe workload")
	var wo watchOptions
	wo.flags(fs)
	if err := parseFlags(env, fs, args, true); err != nil {
		return err
	}
	if *ops < 0 {
		return fmt.Errorf("%w: --ops must be >= 0", errUsage)
	}
	// A flag that the others make meaningless is refused, not dropped.
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, name := range []string{"interval", "count"} {
		if set[name] && !wo.watch {
			return fmt.Errorf("%w: --%s applies only with --watch", errUsage, name)
		}
	}
	if *noProbe && *ops > 0 && set["ops"] {
		return fmt.Errorf("%w: --no-probe runs no probe; drop --ops %d", errUsage, *ops)
	}
	if *noProbe {
		*ops = 0
	}
	if *ops == 0 && set["prefix"] {
		return fmt.Errorf("%w: --prefix names the probe's keys, and there is no probe (--no-probe or --ops 0)", errUsage)
	}
	// Checked before connecting: a bad flag is status 2 whether the
	// servers answer or not.
	if err := wo.check(); err != nil {
		return err
	}
	cfg, err := loadConfig(*configFile)
	if err != nil {
		return err
	}
	c, err := shard.New(ctx, cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	if wo.watching() {
		return watchStats(ctx, env, c, cfg, wo, *ops, *prefix)
	}
	start := time.Now()
	failed := 0
	var firstErr error
	if *ops > 0 {
		p := c.Pipeline()
		for i := 0; i < *ops; i++ {
			k := fmt.Sprintf("%s%d", *prefix, i)
			p.Send("SET", k, i, "EX", int(probeTTL/time.Second))
			p.Send("GET", k)
		}
		res, err := p.Exec(ctx)
		if err != nil {
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
	}
	printStats(env, checkedStats(ctx, c), cfg)
	if *ops == 0 {
		fmt.Fprintln(env.stdout, "probe: none (nothing written)")
		return nil
	}
	fmt.Fprintf(env.stdout, "probe: %d commands in %v, %d failed\n", 2**ops, time.Since(start).Round(time.Millisecond), failed)
	if failed > 0 {
		return errtext.Errorf("probe: %d of %d commands failed, the first with: %w", failed, 2**ops, firstErr)
	}
	return nil
}

// checkedStats returns the client's counters with Down set as well on
// every node that did not answer a PING just now. The health checks' mark
// alone is not enough: a short-lived command ends before they could set
// it, and a server that refuses connections would be shown up. An
// interruption marks nothing.
func checkedStats(ctx context.Context, c *shard.Client) shard.Stats {
	err := c.ForEachNode(ctx, func(ctx context.Context, _ shard.Node, conn redis.Conn) error {
		_, err := redis.DoContext(conn, ctx, "PING")
		return err
	})
	failed := map[string]bool{}
	if j, ok := err.(interface{ Unwrap() []error }); ok && ctx.Err() == nil {
		for _, e := range j.Unwrap() {
			var ne *shard.NodeError
			if errors.As(e, &ne) {
				failed[ne.Node.Addr] = true
			}
		}
	}
	st := c.Stats()
	for i := range st.Nodes {
		if failed[st.Nodes[i].Node.Addr] {
			st.Nodes[i].Down = true
		}
	}
	return st
}

// printStats prints the counters of every node. A replica's read-only
// connection is "replica-reads" only when cfg sends reads to replicas;
// otherwise the replica is listed as "replica" (known, but not read from).
func printStats(env *cliEnv, st shard.Stats, cfg shard.Config) {
	replicaReads := cfg.Cluster.ReadFrom == shard.ReadReplicaRandom || cfg.Cluster.ReadFrom == shard.ReadReplicaLatency
	w := tabwriter.NewWriter(env.stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "NODE\tSTATE\tCOMMANDS\tERRORS\tMOVED\tASK\tTRYAGAIN\tRETRIES\tACTIVE\tIDLE\tRTT\t")
	for _, n := range st.Nodes {
		state := "up"
		if n.Down {
			state = "down"
		}
		if n.ReadOnly && replicaReads {
			state += ",replica-reads"
		} else if n.ReadOnly {
			state += ",replica"
		}
		rtt := "-"
		if n.RTT > 0 {
			rtt = time.Duration(n.RTT).Round(time.Microsecond).String()
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t\n", n.Node, state, n.Commands, n.Errors,
			n.Moved, n.Ask, n.TryAgain, n.Retries, n.Pool.Active, n.Pool.Idle, rtt)
	}
	w.Flush()
	if cfg.Mode == shard.ModeCluster {
		// The discovery New does is not a refresh: 0 means the slot map
		// has not changed hands since the client started.
		fmt.Fprintf(env.stdout, "topology: discovered at start, refreshed %d times since\n", st.Refreshes)
	}
}

package main

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/shardis/shardis/shard"
)

func init() {
	register(command{name: "stats", summary: "run a short probe workload and print the client's per-node counters", run: runStats})
}

func runStats(ctx context.Context, env *cliEnv, args []string) error {
	fs := flag.NewFlagSet("stats", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	configFile := fs.String("config", "", "YAML or JSON client config")
	ops := fs.Int("ops", 1000, "SET+GET pairs of the probe workload (0 = none)")
	prefix := fs.String("prefix", "shardis:stats:", "key prefix of the probe workload")
	var wo watchOptions
	wo.flags(fs)
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if *ops < 0 {
		return fmt.Errorf("%w: --ops must be >= 0", errUsage)
	}
	c, err := loadClient(ctx, *configFile)
	if err != nil {
		return err
	}
	defer c.Close()
	if wo.watching() {
		return watchStats(ctx, env, c, wo, *ops, *prefix)
	}
	start := time.Now()
	failed := 0
	if *ops > 0 {
		p := c.Pipeline()
		for i := 0; i < *ops; i++ {
			k := fmt.Sprintf("%s%d", *prefix, i)
			p.Send("SET", k, i, "EX", 60)
			p.Send("GET", k)
		}
		res, err := p.Exec(ctx)
		if err != nil {
			return err
		}
		for _, r := range res {
			if r.Err != nil {
				failed++
			}
		}
	}
	printStats(env, c.Stats())
	fmt.Fprintf(env.stdout, "probe: %d commands in %v, %d failed\n", 2**ops, time.Since(start).Round(time.Millisecond), failed)
	return nil
}

func printStats(env *cliEnv, st shard.Stats) {
	w := tabwriter.NewWriter(env.stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "NODE\tSTATE\tCOMMANDS\tERRORS\tMOVED\tASK\tTRYAGAIN\tRETRIES\tACTIVE\tIDLE\tRTT\t")
	for _, n := range st.Nodes {
		state := "up"
		if n.Down {
			state = "down"
		}
		if n.ReadOnly {
			state += ",replica-reads"
		}
		rtt := "-"
		if n.RTT > 0 {
			rtt = time.Duration(n.RTT).Round(time.Microsecond).String()
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t\n", n.Node, state, n.Commands, n.Errors,
			n.Moved, n.Ask, n.TryAgain, n.Retries, n.Pool.Active, n.Pool.Idle, rtt)
	}
	w.Flush()
	fmt.Fprintf(env.stdout, "topology refreshes: %d\n", st.Refreshes)
}

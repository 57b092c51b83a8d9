package main

import (
	"context"
	"flag"
	"fmt"
	"text/tabwriter"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/shard"
)

func init() {
	register(command{name: "nodes", summary: "show the nodes and what each serves, as the client sees them", run: runNodes})
}

// loadClient reads --config and connects.
func loadClient(ctx context.Context, path string) (*shard.Client, error) {
	cfg, err := loadConfig(path)
	if err != nil {
		return nil, err
	}
	return shard.New(ctx, cfg)
}

// loadConfig reads --config: a config file, or a URL (as verify and
// reshard take it).
func loadConfig(path string) (shard.Config, error) {
	if path == "" {
		return shard.Config{}, fmt.Errorf("%w: --config FILE is required", errUsage)
	}
	return loadTopology(path)
}

const nodesUsage = `Usage: shardis nodes --config FILE

Connects with the client's YAML or JSON config (or a redis-ring:// or
redis-cluster:// URL) and prints the nodes as the client sees them: in
cluster mode each master's slots and replicas, in ring mode each shard's
name, address, weight and share of the keys.

Flags:
`

func runNodes(ctx context.Context, env *cliEnv, args []string) error {
	fs := flag.NewFlagSet("nodes", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), nodesUsage)
		fs.PrintDefaults()
	}
	configFile := fs.String("config", "", "YAML or JSON client config file, or a redis-ring:// or redis-cluster:// URL")
	if err := parseFlags(env, fs, args, true); err != nil {
		return err
	}
	c, err := loadClient(ctx, *configFile)
	if err != nil {
		return err
	}
	defer c.Close()
	w := tabwriter.NewWriter(env.stdout, 2, 4, 2, ' ', 0)
	defer w.Flush()
	switch r := c.Router().(type) {
	case *shard.ClusterRouter:
		t := r.Table()
		fmt.Fprintln(w, "SLOTS\tCOUNT\tMASTER\tREPLICAS")
		for _, s := range t.Shards() {
			n := 0
			ranges := ""
			for i, rg := range s.Ranges {
				n += rg.End - rg.Start + 1
				if i > 0 {
					ranges += ","
				}
				if rg.Start == rg.End {
					ranges += fmt.Sprint(rg.Start)
				} else {
					ranges += fmt.Sprintf("%d-%d", rg.Start, rg.End)
				}
			}
			if ranges == "" {
				ranges = "-"
			}
			reps := ""
			for i, rep := range s.Replicas {
				if i > 0 {
					reps += " "
				}
				reps += withHealth(rep)
			}
			fmt.Fprintf(w, "%s\t%d\t%s\t%s\n", ranges, n, withHealth(s.Master), reps)
		}
	case *shard.RingRouter:
		rg := r.Ring()
		share := ringShares(rg.Locate, len(rg.Shards()))
		fmt.Fprintf(w, "ring: %s\n", rg)
		fmt.Fprintln(w, "INDEX\tNAME\tADDR\tWEIGHT\tKEY SHARE")
		addrs := sentinelAddrs(c.Stats().Sentinel)
		for i, s := range rg.Shards() {
			addr := s.Addr
			if a, ok := addrs[s.Name]; ok {
				addr = a
			}
			fmt.Fprintf(w, "%d\t%s\t%s\t%d\t%.1f%%\n", i, s.Label(), addr, s.Weight, 100*share[i])
		}
		printSentinelShards(w, c.Stats().Sentinel)
	}
	return nil
}

// withHealth is a cluster node's address, followed by its health in
// parentheses when the cluster does not report it online: a failed master
// is marked as a failed replica is.
func withHealth(n cluster.NodeInfo) string {
	if n.Health != "" && n.Health != cluster.HealthOnline {
		return n.Addr + " (" + n.Health + ")"
	}
	return n.Addr
}

// ringShares estimates each shard's share of the key space from a fixed
// sample of keys.
func ringShares(locate func(string) int, n int) []float64 {
	const sample = 100000
	counts := make([]float64, n)
	for i := 0; i < sample; i++ {
		counts[locate(fmt.Sprintf("sample:%d", i))]++
	}
	for i := range counts {
		counts[i] /= sample
	}
	return counts
}

package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"time"

	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/shard"
)

// watchOptions are the stats command's --watch and --json flags.
type watchOptions struct {
	watch    bool
	json     bool
	interval time.Duration
	count    int
}

func (o *watchOptions) flags(fs *flag.FlagSet) {
	fs.BoolVar(&o.watch, "watch", false, "run the probe and print the counters again every --interval until interrupted")
	fs.BoolVar(&o.json, "json", false, "print JSON (with --watch: one object per line)")
	fs.DurationVar(&o.interval, "interval", time.Second, "refresh interval of --watch")
	fs.IntVar(&o.count, "count", 0, "with --watch, stop after this many refreshes (0 = until interrupted)")
}

// check refuses an --interval or --count that cannot be used.
func (o watchOptions) check() error {
	if o.interval <= 0 {
		return fmt.Errorf("%w: --interval must be > 0", errUsage)
	}
	if o.count < 0 {
		return fmt.Errorf("%w: --count must be >= 0", errUsage)
	}
	return nil
}

// watching reports whether the new output modes are asked for; without
// them stats prints its table once, as before.
func (o watchOptions) watching() bool { return o.watch || o.json }

// statsReport is the JSON form of one refresh.
type statsReport struct {
	Time      time.Time    `json:"time"`
	Nodes     []nodeReport `json:"nodes"`
	Refreshes int64        `json:"topology_refreshes"`
	Probe     probeReport  `json:"probe"`
}

type nodeReport struct {
	Name     string `json:"name"`
	Addr     string `json:"addr"`
	State    string `json:"state"` // "up" or "down"
	ReadOnly bool   `json:"read_only"`
	Commands int64  `json:"commands"`
	Errors   int64  `json:"errors"`
	Moved    int64  `json:"moved"`
	Ask      int64  `json:"ask"`
	TryAgain int64  `json:"tryagain"`
	Retries  int64  `json:"retries"`
	// CommandsPerSec is the rate since the previous refresh (--watch).
	CommandsPerSec float64 `json:"commands_per_sec"`
	Active         int     `json:"pool_active"`
	Idle           int     `json:"pool_idle"`
	WaitCount      int64   `json:"pool_waits"`
	WaitSeconds    float64 `json:"pool_wait_seconds"`
	Dials          int64   `json:"pool_dials"`
	DialErrors     int64   `json:"pool_dial_errors"`
	RTTSeconds     float64 `json:"rtt_seconds"`
}

type probeReport struct {
	Commands int     `json:"commands"`
	Failed   int     `json:"failed"`
	Seconds  float64 `json:"seconds"`
	firstErr error   // the first failed command's error
}

// runProbe runs the SET+GET workload of the stats command.
func runProbe(ctx context.Context, c *shard.Client, ops int, prefix string) (probeReport, error) {
	start := time.Now()
	r := probeReport{Commands: 2 * ops}
	if ops > 0 {
		p := c.Pipeline()
		for i := 0; i < ops; i++ {
			k := fmt.Sprintf("%s%d", prefix, i)
			p.Send("SET", k, i, "EX", 60)
			p.Send("GET", k)
		}
		res, err := p.Exec(ctx)
		if err != nil {
			return r, err
		}
		for _, x := range res {
			if x.Err != nil {
				if r.Failed == 0 {
					r.firstErr = x.Err
				}
				r.Failed++
			}
		}
	}
	r.Seconds = time.Since(start).Seconds()
	return r, nil
}

func buildReport(st shard.Stats, pr probeReport, prev map[string]int64, elapsed time.Duration) statsReport {
	out := statsReport{Time: time.Now().UTC(), Refreshes: st.Refreshes, Probe: pr, Nodes: []nodeReport{}}
	for _, n := range st.Nodes {
		state := "up"
		if n.Down {
			state = "down"
		}
		nr := nodeReport{
			Name: n.Node.Name, Addr: n.Node.Addr, State: state, ReadOnly: n.ReadOnly,
			Commands: n.Commands, Errors: n.Errors, Moved: n.Moved, Ask: n.Ask, TryAgain: n.TryAgain, Retries: n.Retries,
			Active: n.Pool.Active, Idle: n.Pool.Idle, WaitCount: n.Pool.WaitCount, WaitSeconds: n.Pool.WaitDuration.Seconds(),
			Dials: n.Pool.Dials, DialErrors: n.Pool.DialErrors, RTTSeconds: time.Duration(n.RTT).Seconds(),
		}
		key := fmt.Sprintf("%s|%t", n.Node.Addr, n.ReadOnly)
		if old, ok := prev[key]; ok && elapsed > 0 {
			nr.CommandsPerSec = float64(n.Commands-old) / elapsed.Seconds()
		}
		prev[key] = n.Commands
		out.Nodes = append(out.Nodes, nr)
	}
	return out
}

// watchStats prints the counters once (--json), or every interval
// (--watch) until ctx ends or --count refreshes were printed. As the table
// form does, it returns an error (exit status 1) when a probe command
// failed, after printing every report: the first failure's, with how many
// of how many failed in all.
func watchStats(ctx context.Context, env *cliEnv, c *shard.Client, cfg shard.Config, o watchOptions, ops int, prefix string) error {
	if err := o.check(); err != nil {
		return err
	}
	prev := map[string]int64{}
	last := time.Time{}
	t := time.NewTicker(o.interval)
	defer t.Stop()
	enc := json.NewEncoder(env.stdout)
	var (
		commands, failed int
		firstErr         error
	)
	// done is the end of the run: nil when every probe command succeeded.
	done := func() error {
		if failed > 0 {
			return errtext.Errorf("probe: %d of %d commands failed, the first with: %w", failed, commands, firstErr)
		}
		return nil
	}
	for i := 1; ; i++ {
		pr, err := runProbe(ctx, c, ops, prefix)
		if err != nil {
			if ctx.Err() != nil {
				return done() // interrupted
			}
			return err
		}
		commands += pr.Commands
		if pr.Failed > 0 && failed == 0 {
			firstErr = pr.firstErr
		}
		failed += pr.Failed
		var elapsed time.Duration
		if !last.IsZero() {
			elapsed = time.Since(last)
		}
		last = time.Now()
		st := checkedStats(ctx, c)
		rep := buildReport(st, pr, prev, elapsed)
		if o.json {
			if err := enc.Encode(rep); err != nil {
				return err
			}
		} else {
			fmt.Fprintf(env.stdout, "--- %s\n", rep.Time.Format(time.RFC3339))
			printStats(env, st, cfg)
			fmt.Fprintf(env.stdout, "probe: %d commands in %v, %d failed\n", pr.Commands,
				time.Duration(pr.Seconds*float64(time.Second)).Round(time.Millisecond), pr.Failed)
		}
		if !o.watch || (o.count > 0 && i >= o.count) {
			return done()
		}
		select {
		case <-ctx.Done():
			return done()
		case <-t.C:
		}
	}
}

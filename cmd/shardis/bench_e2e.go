package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/shardis/shardis/bench/e2e"
	"github.com/shardis/shardis/bench/report"
	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/shard"
)

const benchE2EUsage = `Usage: shardis bench e2e [--config FILE]... [--duration D] [--callers LIST]
       [--pipelines LIST] [--multi LIST] [--report DIR] [--json]

Measures the shardis client end to end: throughput (operations and commands
per second) and p50/p99 latency of
  - single commands (SET then GET) from 1, 16 and 64 concurrent callers;
  - pipelines of 1k and 10k commands (half SET, half GET);
  - cross-shard MSET and MGET of 100 and 1k keys (split by the client).

Without --config it starts its own servers on 127.0.0.1 and says which:
three redis-server processes (ring mode) and a 3-master Redis Cluster
(cluster mode) when redis-server is installed, embedded miniredis servers
otherwise. Each --config FILE (YAML or JSON, see shard.LoadConfig; or a
redis-ring:// or redis-cluster:// URL) adds a target instead, in the mode
the file names. The workload writes 16-byte
values under keys shardis:bench:<n>:pf, every key before the first case (so
every case's SETs overwrite), and deletes them at the end; when that fails
it says how many keys may remain and exits with status 1.

Each case runs --duration per target after a short warm-up; the whole run
stops by itself after twice its planned time plus a minute. Ctrl-C stops
it, prints what was measured so far and exits with status 130 (143 for
SIGTERM), failed operations or not.

Prints a table; --report DIR also writes DIR/report.md with SVG charts
(throughput.svg, latency.svg); --json prints one JSON document instead of
the table. Every reply is checked against what was written; a run in
which operations failed prints its figures and exits with status 1.

Flags:
`

// runBenchE2E implements "shardis bench e2e".
func runBenchE2E(ctx context.Context, env *cliEnv, args []string) error {
	fs := flag.NewFlagSet("bench e2e", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), benchE2EUsage)
		fs.PrintDefaults()
	}
	var configs stringList
	fs.Var(&configs, "config", "client config file (YAML or JSON) or URL; repeat for several targets")
	duration := fs.Duration("duration", e2e.DefaultDuration, "how long each case runs per target")
	callers := fs.String("callers", "1,16,64", "concurrent callers of the single-command cases")
	pipelines := fs.String("pipelines", "1k,10k", "commands per pipeline (\"\" for none)")
	multi := fs.String("multi", "100,1k", "keys per MSET and MGET (\"\" for none)")
	reportDir := fs.String("report", "", "write report.md and SVG charts into this directory")
	asJSON := fs.Bool("json", false, "print one JSON document instead of the table")
	if err := parseFlags(env, fs, args, true); err != nil {
		return err
	}
	if *duration <= 0 || *duration > 10*time.Minute {
		return fmt.Errorf("%w: --duration must be between 0 and 10m", errUsage)
	}
	cases, err := e2eCases(*callers, *pipelines, *multi)
	if err != nil {
		return errtext.Errorf("%w: %w", errUsage, err)
	}
	if err := makeReportDir(*reportDir); err != nil {
		return err
	}
	info := env.stdout
	if *asJSON {
		info = env.stderr
	}

	var (
		targets  []e2e.Target
		servers  string
		embedded bool
	)
	if len(configs) > 0 {
		if targets, err = configTargets(configs); err != nil {
			return err
		}
		names := make([]string, len(configs))
		for i, c := range configs {
			names[i] = redactArg(c)
		}
		servers = "the servers of " + strings.Join(names, ", ")
	} else {
		fmt.Fprintln(info, "No --config given: starting local servers...")
		s, err := e2e.Start(ctx)
		if err != nil {
			return err
		}
		defer s.Close()
		targets, servers, embedded = s.Targets(), s.Description, s.Embedded
		fmt.Fprintf(info, "Using %s.\n", servers)
	}
	fmt.Fprintf(info, "%d cases x %d targets x %v: about %v.\n", len(cases), len(targets), *duration,
		time.Duration(len(cases)*len(targets))*(*duration+min(*duration/10, time.Second)))

	bar := newProgress(env.stderr, "", 0)
	lastDone := -1
	rep, runErr := e2e.Run(ctx, targets, e2e.Options{
		Duration: *duration,
		Cases:    cases,
		Progress: func(p e2e.Progress) {
			done := (p.Step-1)*100 + int(p.Fraction*100)
			if done == lastDone {
				return // the bar shows it already (and ended its line at 100%)
			}
			lastDone = done
			bar.total = p.Steps * 100
			bar.label = fmt.Sprintf("%-22s", p.Target+" "+p.Case)
			if p.Step == p.Steps && p.Fraction >= 1 {
				bar.label = fmt.Sprintf("%-22s", "e2e")
			}
			bar.set(done)
		},
	})
	if rep == nil {
		return runErr
	}
	rep.Servers, rep.Embedded = servers, embedded
	if runErr != nil {
		bar.stop() // end the unfinished progress line
	}
	if *asJSON {
		if err := writeJSON(env.stdout, rep); err != nil {
			return err
		}
	} else if err := report.E2EText(env.stdout, rep); err != nil {
		return err
	}
	if *reportDir != "" {
		paths, err := report.WriteE2E(*reportDir, rep, commandLine(append([]string{"bench", "e2e"}, args...)))
		if err != nil {
			return err
		}
		listFiles(info, paths)
	}
	failed := failedOperations(rep)
	if runErr == nil {
		return failed
	}
	if rep.Interrupted {
		runErr = interruptedError{errtext.Errorf("interrupted; printed what was measured: %w", runErr)}
	}
	// The run's own error comes first; the count of failed operations
	// follows on a line of its own, so that every exit says it.
	if failed == nil {
		return errtext.Errorf("%w\nno operations failed in the %d measurements made", runErr, len(rep.Results))
	}
	return errtext.Errorf("%w\n%w", runErr, failed)
}

// errBenchFailed marks a run in which operations failed: its figures leave
// them out, so they measure less work than was asked for.
var errBenchFailed = errors.New("operations failed")

// failedOperations returns an error wrapping errBenchFailed when a result
// of rep counts failed operations, nil otherwise.
func failedOperations(rep *e2e.Report) error {
	var failed, cases int64
	for _, r := range rep.Results {
		if r.Errors > 0 {
			failed += r.Errors
			cases++
		}
	}
	if failed == 0 {
		return nil
	}
	return fmt.Errorf("%w: %d of them in %d of %d measurements, whose figures leave them out", errBenchFailed, failed, cases, len(rep.Results))
}

// e2eCases builds the cases from the size flags.
func e2eCases(callers, pipelines, multi string) ([]e2e.Case, error) {
	c, err := e2e.ParseSizes(callers, 4096)
	if err != nil {
		return nil, fmt.Errorf("--callers: %w", err)
	}
	p, err := e2e.ParseSizes(pipelines, 1_000_000)
	if err != nil {
		return nil, fmt.Errorf("--pipelines: %w", err)
	}
	m, err := e2e.ParseSizes(multi, 1_000_000)
	if err != nil {
		return nil, fmt.Errorf("--multi: %w", err)
	}
	cases := e2e.Cases(c, p, m)
	if len(cases) == 0 {
		return nil, errors.New("no cases: --callers, --pipelines and --multi are all empty")
	}
	return cases, nil
}

// configTargets loads one target per config file, named after its mode
// ("ring", "cluster", "ring 2", ...).
func configTargets(files []string) ([]e2e.Target, error) {
	var targets []e2e.Target
	seen := map[string]int{}
	for _, f := range files {
		shown := redactArg(f) // a URL without its password
		cfg, err := loadTopology(f)
		if err != nil {
			return nil, err
		}
		mode := string(cfg.Mode)
		if mode == "" {
			mode = string(shard.ModeRing)
		}
		seen[mode]++
		name := mode
		if seen[mode] > 1 {
			name = fmt.Sprintf("%s %d", mode, seen[mode])
		}
		var desc string
		if cfg.Mode == shard.ModeCluster {
			desc = fmt.Sprintf("Redis Cluster via seeds %s (%s)", strings.Join(cfg.Seeds, ", "), shown)
		} else {
			hash := cfg.Hash
			if hash == "" {
				hash = "murmur3"
			}
			desc = fmt.Sprintf("%d shards, %s ring (%s)", len(cfg.Shards), hash, shown)
		}
		targets = append(targets, e2e.Target{Name: name, Config: cfg, Servers: desc})
	}
	return targets, nil
}

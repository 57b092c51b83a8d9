package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/shardis/shardis/bench/placement"
	"github.com/shardis/shardis/bench/report"
	"github.com/shardis/shardis/internal/errtext"
)

const benchPlacementUsage = `Usage: shardis bench placement [--keys FILE | --generate N [--pattern P]]
       [--shards LIST] [--strategies LIST] [--lookup-time D] [--report DIR] [--json]

Compares key placement strategies offline: no server is contacted. Every
strategy places the same keys on 3, 10 and 100 equal shards and on four
shards weighted 1:2:3:4 (plus the --shards layout when given), and the
command reports, per strategy and layout:

  balance    keys per shard: emptiest and busiest shard and standard
             deviation, in % of the shard's fair share (its weight's share);
  movement   % of keys that change shard when one shard is added and when
             the last one is removed, next to the ideal (1/(n+1) and 1/n),
             and the % moved between shards present before and after
             (a consistent strategy moves none);
  lookup     nanoseconds and heap allocations per key, all strategies timed
             in the same run;
  memory     heap bytes the routing structure keeps (measured).

Strategies: murmur3, jedis, ketama, modula (shardis ring algorithms), slots
(Redis Cluster: CRC16 hash slots in contiguous ranges as redis-cli creates
them, rebalanced when a shard joins or leaves), and two baselines shardis
does not offer: rendezvous (as the go-redis Ring client does it) and jump
(Lamping-Veach jump consistent hash). rendezvous and jump ignore weights
and are skipped on weighted layouts.

Generated shards are named shard-1, shard-2, ... at 10.0.0.1:6379, ...
(only hashed, never contacted). LIST for --shards is comma-separated
"HOST:PORT[:WEIGHT][ NAME]" entries, as for 'shardis locate'.

Without --keys, 100000 keys (--generate: 1 to 10000000) are generated
from the pattern; {id} is replaced by 0, 1, 2, ... With --keys, one key per line ("-" reads standard
input); --pattern and --generate are then usage errors, and so is a file
that cannot be read or holds no key (status 2).

Prints a table; --report DIR also writes DIR/report.md with SVG charts
(balance.svg, movement.svg, lookup.svg); --json prints one JSON document
instead of the table. Ctrl-C stops the run, prints what was measured and
exits with status 130 (143 for SIGTERM).

Flags:
`

// defaultGenerate is the number of keys generated without --keys or
// --generate.
const defaultGenerate = 100000

// runBenchPlacement implements "shardis bench placement".
func runBenchPlacement(ctx context.Context, env *cliEnv, args []string) error {
	fs := flag.NewFlagSet("bench placement", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), benchPlacementUsage)
		fs.PrintDefaults()
	}
	keysFile := fs.String("keys", "", "file with one key per line (\"-\": standard input)")
	generate := fs.Int("generate", 0, fmt.Sprintf("generate this many keys from --pattern (default %d without --keys)", defaultGenerate))
	pattern := fs.String("pattern", placement.DefaultPattern, "pattern of generated keys; {id} becomes the key's number")
	shardList := fs.String("shards", "", "an extra layout, \"HOST:PORT[:WEIGHT][ NAME],...\"")
	strategyList := fs.String("strategies", strings.Join(placement.Strategies(), ","), "strategies to compare, comma-separated")
	lookupTime := fs.Duration("lookup-time", placement.DefaultLookupTime, "time spent timing lookups per strategy and layout")
	reportDir := fs.String("report", "", "write report.md and SVG charts into this directory")
	asJSON := fs.Bool("json", false, "print one JSON document instead of the table")
	if err := parseFlags(env, fs, args, true); err != nil {
		return err
	}
	if *keysFile != "" && *generate != 0 {
		return fmt.Errorf("%w: give --keys or --generate, not both", errUsage)
	}
	patternSet, generateSet := false, false
	fs.Visit(func(f *flag.Flag) {
		patternSet = patternSet || f.Name == "pattern"
		generateSet = generateSet || f.Name == "generate"
	})
	if generateSet && *generate == 0 {
		return fmt.Errorf("%w: --generate must be at least 1", errUsage)
	}
	if *keysFile != "" && patternSet {
		return fmt.Errorf("%w: --pattern is for generated keys; --keys reads them instead", errUsage)
	}
	if *lookupTime <= 0 || *lookupTime > time.Minute {
		return fmt.Errorf("%w: --lookup-time must be between 0 and 1m", errUsage)
	}
	strategies, err := placement.ParseStrategies(*strategyList)
	if err != nil {
		return errtext.Errorf("%w: %w", errUsage, err)
	}
	layouts := placement.DefaultLayouts()
	if *shardList != "" {
		l, err := placement.ParseLayout(*shardList)
		if err != nil {
			return errtext.Errorf("%w: --shards: %w", errUsage, err)
		}
		layouts = append(layouts, l)
	}
	if err := makeReportDir(*reportDir); err != nil {
		return err
	}
	keys, source, err := placementKeys(env, *keysFile, *generate, *pattern)
	if err != nil {
		return err
	}

	out, info := env.stdout, env.stdout
	if *asJSON {
		info = env.stderr
	}
	var bar *progress
	rep, runErr := placement.Run(ctx, keys, placement.Options{
		Strategies: strategies,
		Layouts:    layouts,
		LookupTime: *lookupTime,
		KeySource:  source,
		Progress: func(done, total int) {
			if bar == nil {
				bar = newProgress(env.stderr, "placement", total)
			}
			bar.set(done)
		},
	})
	if rep == nil {
		return runErr
	}
	if runErr != nil && bar != nil {
		bar.stop() // end the unfinished progress line
	}
	if *asJSON {
		if err := writeJSON(out, rep); err != nil {
			return err
		}
	} else if err := report.PlacementText(out, rep); err != nil {
		return err
	}
	if *reportDir != "" {
		paths, err := report.WritePlacement(*reportDir, rep, commandLine(append([]string{"bench", "placement"}, args...)))
		if err != nil {
			return err
		}
		listFiles(info, paths)
	}
	if runErr != nil {
		return interruptedError{errtext.Errorf("interrupted; printed what was measured: %w", runErr)}
	}
	return nil
}

// placementKeys reads or generates the keys, and describes them.
func placementKeys(env *cliEnv, file string, generate int, pattern string) ([]string, string, error) {
	if file == "" {
		n := generate
		if n == 0 {
			n = defaultGenerate
		}
		keys, err := placement.GenerateKeys(pattern, n)
		if err != nil {
			return nil, "", errtext.Errorf("%w: %w", errUsage, err)
		}
		return keys, fmt.Sprintf("generated from %q", pattern), nil
	}
	var r io.Reader = env.stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, "", keysFileError(file, err)
		}
		defer f.Close()
		r = f
	}
	keys, err := placement.ReadKeys(r)
	if err != nil {
		return nil, "", keysFileError(file, err)
	}
	name := file
	if file == "-" {
		name = "standard input"
	}
	return keys, "read from " + name, nil
}

// keysFileError is the error of a --keys file that cannot be read or
// holds no key: a usage error (status 2, as a config that cannot be
// read), which names the flag and quotes the file as redactArg does (a
// user:password@host word given by mistake); the path the os error
// repeats is left out.
func keysFileError(file string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return errtext.Errorf("%w: --keys %q: %w", errUsage, redactArg(file), err)
}

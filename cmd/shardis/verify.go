package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/shardis/shardis/internal/addrkey"
	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
)

func init() {
	register(command{name: "verify", summary: "report keys that sit on a node that does not own them", run: runVerify})
}

const verifyUsage = `Usage: shardis verify --config CFG [--nodes ADDR,...] [--samples N]

Scans every node of CFG (a config file or a URL; during a migration the old
topology's nodes too, and --nodes more) and lists keys that sit on a node
that does not own them (--samples of them, and the count on each node). Exits with status 1 when there is any, 3 when the
scan could not be done (a node that did not answer), 130 (143 on SIGTERM)
when interrupted, 2 on a usage error or a bad config (one that cannot be
read, parsed or used).

Flags:
`

func runVerify(ctx context.Context, env *cliEnv, args []string) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), verifyUsage)
		fs.PrintDefaults()
	}
	cfgArg := fs.String("config", "", "the topology: config file or URL (required)")
	nodes := fs.String("nodes", "", "more node addresses to scan, comma-separated (e.g. a shard that left)")
	samples := fs.Int("samples", 20, "misplaced keys to list (0: none, only the counts)")
	if err := parseFlags(env, fs, args, true); err != nil {
		return err
	}
	if *samples < 0 {
		return fmt.Errorf("%w: --samples %d: want a number of keys, 0 for none", errUsage, *samples)
	}
	if *cfgArg == "" {
		return fmt.Errorf("%w: --config is required", errUsage)
	}
	cfg, err := loadTopology(*cfgArg)
	if err != nil {
		// Not status 1, which says that keys are misplaced.
		return usageError{errtext.Errorf("--config: %w", err)} // reshard.go
	}
	var extra []string
	for _, n := range strings.Split(*nodes, ",") {
		if n = strings.TrimSpace(n); n != "" { // "a, b" as a person writes it
			if err := checkNodeArg(n); err != nil {
				return err
			}
			extra = append(extra, n)
		}
	}
	// VerifyOptions.Samples 0 means its default, 20: --samples 0 asks
	// for none, so at least one is collected and none printed.
	rep, err := reshard.Verify(ctx, cfg, reshard.VerifyOptions{Nodes: extra, Samples: max(*samples, 1)})
	if errors.Is(err, shard.ErrBadConfig) { // a config that loads but cannot be used
		return usageError{err}
	}
	if err != nil && ctx.Err() != nil { // Ctrl-C, SIGTERM
		return interruptedError{errtext.Errorf("interrupted; the scan is incomplete: %w (%w)", err, errIncomplete)}
	}
	if err != nil {
		return errtext.Errorf("%w (%w)", err, errIncomplete)
	}
	for _, m := range rep.Samples[:min(len(rep.Samples), *samples)] {
		fmt.Fprintf(env.stdout, "misplaced %s\n", m)
	}
	// The count of each node that holds misplaced keys: the samples are
	// a few (none with --samples 0), and the operator needs the node to
	// look at.
	for _, addr := range slices.Sorted(maps.Keys(rep.PerNode)) {
		fmt.Fprintf(env.stdout, "%d misplaced on %s\n", rep.PerNode[addr], addr)
	}
	fmt.Fprintf(env.stdout, "%d keys scanned, %d misplaced", rep.Scanned, rep.Misplaced)
	if rep.Pending > 0 {
		fmt.Fprintf(env.stdout, ", %d not moved yet (at their old owner)", rep.Pending)
	}
	if rep.Strays > 0 {
		fmt.Fprintf(env.stdout, ", %d of them stray (on a node that neither topology places them on: the mover leaves them; move or delete them by hand)", rep.Strays)
	}
	fmt.Fprintln(env.stdout)
	if rep.Misplaced > 0 {
		return fmt.Errorf("%w: %d", reshard.ErrMisplaced, rep.Misplaced)
	}
	return nil
}

// checkNodeArg accepts a --nodes entry that is host:port. Another one is
// a usage error (status 2, not 3: no node failed to answer), quoted
// without what may be a password: an entry pasted with its credentials
// (":pw@host:port", a URL) or options ("host:port?password=pw").
func checkNodeArg(n string) error {
	quoted := redactArg(n)
	if h, _, ok := strings.Cut(quoted, "?"); ok {
		quoted = h + "?..."
	}
	if addrkey.HasCredentials(n) || strings.Contains(n, "://") {
		return fmt.Errorf("%w: --nodes %q: want host:port (credentials go in --config)", errUsage, quoted)
	}
	host, port, err := net.SplitHostPort(n)
	if p, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || p < 1 || p > 65535 {
		return fmt.Errorf("%w: --nodes %q: want host:port", errUsage, quoted)
	}
	return nil
}

package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/shardis/shardis/internal/addrkey"
	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
)

func init() {
	register(command{name: "reshard", summary: "move keys live from one topology to another (ring or cluster)", run: runReshard})
}

const reshardUsage = `Usage: shardis reshard --from OLD --to NEW [--dry-run] [--rate N[/s]|NMB/s] [--max-block D] [--timeout D] [--yes]
       shardis reshard --from OLD --to NEW --arm
       shardis reshard --from OLD --to NEW --finish
       shardis reshard --from OLD --to NEW --clear-fence

Moves every key whose owner changes from the topology OLD to the topology NEW
(each a config file or a URL such as redis-ring://h1:6379,h2:6379; NEW may be
a redis-cluster:// URL), then verifies that every key sits on its owner.
Every application process must already run in migration mode from OLD to NEW
(see docs/resharding.md; NEW may be their config file, whose migration.addrs,
where the old nodes reach the new ones, MIGRATE then uses): the move refuses to start while CLIENT LIST on an
old node shows a connection that routes by one topology alone or that no
shardis client named. It is safe to stop (Ctrl-C, or a kill) and run again.

Processes in migration mode move no key until the fence is armed: they route
by OLD until a marker on the old nodes says so. Before moving, reshard arms
it (sets the marker to "fenced", waits until every process acknowledges in
CLIENT LIST, then sets it to "armed"); --arm does only that, without moving
(refused while a mover of the same migration runs: it arms by itself).
Before the fence, each old node MIGRATEs a throwaway key to each new node
its keys go to, as the processes will (migration.addrs of NEW, NEW's
credentials): an old node that cannot (TLS-only new nodes without
tls-cluster yes on the old ones, an address it cannot reach, a password the
new node refuses) stops it, nothing armed; --skip-probe arms without it.

Once every process runs the plain NEW config, --finish ends the migration: it
checks CLIENT LIST on the old nodes (no process may still route by the
migration; it names each connection that does and deletes nothing), verifies that every key sits at its owner, and deletes the marker.
A move that verifies clean does the same at its end when no process uses the
migration any more; otherwise it keeps the marker and names the connections.
--clear-fence deletes the marker without any check (the forced path).
--arm, --finish and --clear-fence move no key and refuse the move's flags
(--rate, --batch, --max-block, --timeout, --dump); --finish and
--clear-fence also --allow-unnamed and --skip-probe, which only arming reads.

Exits with status 2 on a usage error or a bad config (one that cannot be
read, parsed or used, such as one server under two addresses), 130 (143 on
SIGTERM) when interrupted (it prints what it did; run the same command
again to go on), 1 when the command fails otherwise (keys left misplaced
by the closing verification among them).

Flags:
`

func runReshard(ctx context.Context, env *cliEnv, args []string) error {
	fs := flag.NewFlagSet("reshard", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), reshardUsage)
		fs.PrintDefaults()
	}
	fromArg := fs.String("from", "", "the old topology: config file or URL (required)")
	toArg := fs.String("to", "", "the new topology: config file or URL (required)")
	dryRun := fs.Bool("dry-run", false, "count the keys and bytes that would move, between which nodes; move nothing")
	rate := fs.String("rate", "", "pace: keys per second (5000, 5000/s; at least 1) or bytes per second (20MB/s, 512KB/s; at least 1KB/s)")
	yes := fs.Bool("yes", false, "do not ask for confirmation")
	batch := fs.Int("batch", 0, "keys per MIGRATE (default 512; lower it for large values: the old node waits for each)")
	maxBlock := fs.Duration("max-block", 0, "how long one MIGRATE may hold an old node, which serves nothing else meanwhile (default 10ms); the batch shrinks to fit")
	timeout := fs.Duration("timeout", 0, "how long one MIGRATE's I/O between the servers may take, and the DUMP/RESTORE path's pause of the old node's writes lasts, less a second (default 10s); raise it for values that take longer to travel")
	dump := fs.Bool("dump", false, "move with DUMP/RESTORE through this process instead of MIGRATE (pauses the old node's writes for each batch: CLIENT PAUSE WRITE, Redis 6.2+)")
	allowUnnamed := fs.Bool("allow-unnamed", false, "start even when old nodes have connections no shardis client named")
	skipProbe := fs.Bool("skip-probe", false, "arm without first checking that every old node can MIGRATE to the new nodes as the processes will")
	quiet := fs.Bool("quiet", false, "no progress bar")
	armOnly := fs.Bool("arm", false, "arm the fence (processes start moving keys on touch) and move nothing")
	finish := fs.Bool("finish", false, "end the migration: delete the fence's marker once no process uses the migration and every key is at its owner")
	clearFence := fs.Bool("clear-fence", false, "delete the fence's marker from the old nodes without any check (forced; prefer --finish)")
	if err := parseFlags(env, fs, args, true); err != nil {
		return err
	}
	if *fromArg == "" || *toArg == "" {
		return fmt.Errorf("%w: --from and --to are required", errUsage)
	}
	keysPS, bytesPS, err := parseRate(*rate)
	if err != nil {
		return errtext.Errorf("%w: %w", errUsage, err)
	}
	if keysPS == 0 && bytesPS == 0 && flagSet(fs, "rate") {
		// "--rate \"$RATE\"" with RATE unset: a pace was asked for,
		// and the move would run at full speed.
		return fmt.Errorf("%w: --rate %q: want keys per second (5000) or bytes per second (20MB/s); leave --rate out for no pace", errUsage, *rate)
	}
	if *batch < 0 {
		return fmt.Errorf("%w: --batch %d: want a positive number of keys", errUsage, *batch)
	}
	if *maxBlock < 0 {
		return fmt.Errorf("%w: --max-block %v: want a positive duration such as 5ms", errUsage, *maxBlock)
	}
	if *timeout < 0 {
		return fmt.Errorf("%w: --timeout %v: want a positive duration such as 30s", errUsage, *timeout)
	}
	// A config that cannot be read or parsed is a usage error (status
	// 2), as in verify: status 1 says that the move failed.
	from, err := loadTopology(*fromArg)
	if err != nil {
		return usageError{errtext.Errorf("--from: %w", err)}
	}
	to, err := loadTopology(*toArg)
	if err != nil {
		return usageError{errtext.Errorf("--to: %w", err)}
	}
	if n := count(*armOnly, *finish, *clearFence); n > 1 {
		return fmt.Errorf("%w: --arm, --finish and --clear-fence exclude each other", errUsage)
	} else if n == 1 && *dryRun {
		return fmt.Errorf("%w: --dry-run changes nothing; --arm, --finish and --clear-fence change the fence", errUsage)
	}
	if err := checkModeFlags(fs, *armOnly, *finish, *clearFence); err != nil {
		return err
	}
	err = reshardVerb(ctx, env, from, to, reshardFlags{dryRun: *dryRun, yes: *yes, quiet: *quiet, armOnly: *armOnly,
		finish: *finish, clearFence: *clearFence, allowUnnamed: *allowUnnamed, skipProbe: *skipProbe, dump: *dump, batch: *batch,
		maxBlock: *maxBlock, timeout: *timeout, keysPS: keysPS, bytesPS: bytesPS})
	if errors.Is(err, shard.ErrBadConfig) {
		// A config that loads but cannot be used (one server under two
		// addresses, options no pool accepts): a usage error too.
		return usageError{err}
	}
	return err
}

// reshardFlags are the parsed flags of reshard that choose and tune what
// it does.
type reshardFlags struct {
	dryRun, yes, quiet, armOnly, finish, clearFence, allowUnnamed, skipProbe, dump bool
	batch                                                                          int
	maxBlock, timeout                                                              time.Duration
	keysPS, bytesPS                                                                float64
}

// reshardVerb runs what the flags ask: the move (or its dry run), --arm,
// --finish or --clear-fence.
func reshardVerb(ctx context.Context, env *cliEnv, from, to shard.Config, f reshardFlags) error {
	switch {
	case f.finish:
		v, err := reshard.Finish(ctx, from, to)
		if v != nil {
			fmt.Fprintf(env.stdout, "verify: %d keys scanned, %d misplaced\n", v.Scanned, v.Misplaced)
		}
		if err != nil {
			return interrupted(ctx, err, "run the same command again to finish")
		}
		fmt.Fprintln(env.stdout, "finished: fence cleared (a process started on the migrating config from now on would wait for a fence again)")
		return nil
	case f.armOnly:
		if err := reshard.Arm(ctx, from, to, reshard.ArmOptions{AllowUnnamed: f.allowUnnamed, SkipProbe: f.skipProbe}); err != nil {
			return interrupted(ctx, err, "run the same command again to arm")
		}
		fmt.Fprintln(env.stdout, "armed: processes in migration mode move keys on touch")
		return nil
	case f.clearFence:
		if err := reshard.ClearFence(ctx, from, to); err != nil {
			return interrupted(ctx, err, "run the same command again to clear the fence from every old node")
		}
		fmt.Fprintln(env.stdout, "fence cleared")
		return nil
	}
	opts := reshard.Options{From: from, To: to, DryRun: f.dryRun, KeysPerSecond: f.keysPS, BytesPerSecond: f.bytesPS,
		Batch: f.batch, MaxBlock: f.maxBlock, Timeout: f.timeout, Dump: f.dump, AllowUnnamed: f.allowUnnamed, SkipProbe: f.skipProbe, Finish: true}
	if to.Migration != nil {
		// The processes' config of step 1 as NEW: where the old nodes
		// reach the new ones (migration.addrs), for MIGRATE.
		opts.Addrs = to.Migration.Addrs
	}
	if !f.dryRun {
		if err := reshard.CheckClients(ctx, from, to, f.allowUnnamed); err != nil {
			return err
		}
		if !f.yes && isTerminal(env.stdin) {
			fmt.Fprintf(env.stderr, "Move keys from %s to %s? [y/N] ", describe(from), describe(to))
			line, err := readAnswer(ctx, env.stdin)
			if err != nil {
				fmt.Fprintln(env.stderr)
				return errtext.Errorf("not confirmed; nothing moved: %w", err)
			}
			if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
				return errors.New("not confirmed; nothing moved")
			}
		}
	}
	if !f.quiet {
		bar := &reshardBar{w: env.stderr, tty: isTerminal(env.stderr), ctx: ctx, dry: f.dryRun}
		opts.Progress = bar.draw
	}
	rep, err := reshard.Move(ctx, opts)
	if rep != nil {
		printReport(env.stdout, rep, f.dryRun)
		if err == nil && !f.dryRun {
			printFinish(env.stdout, rep)
		}
	}
	if f.dryRun {
		return interrupted(ctx, err, "a dry run: nothing moved")
	}
	// Ctrl-C or SIGTERM: say that the move stopped short and how to go
	// on, which "context canceled" alone did not.
	return interrupted(ctx, err, "run the same command again to move the rest")
}

// interrupted returns err, or when ctx ended (Ctrl-C, SIGTERM) err
// prefixed with "interrupted" and what to do next: "context canceled"
// alone did not say that the command stopped short.
//
// The error matches errInterrupted: the exit status says that the
// command stopped short (130, 143), not that it failed (1).
func interrupted(ctx context.Context, err error, next string) error {
	if err == nil || ctx.Err() == nil {
		return err
	}
	return interruptedError{errtext.Errorf("interrupted; %s: %w", next, err)}
}

// interruptedError makes err match errInterrupted without changing its
// message.
type interruptedError struct{ err error }

func (e interruptedError) Error() string   { return e.err.Error() }
func (e interruptedError) Unwrap() []error { return []error{e.err, errInterrupted} }

// usageError makes err a usage error (status 2, errUsage) without
// changing its message.
type usageError struct{ err error }

func (e usageError) Error() string   { return e.err.Error() }
func (e usageError) Unwrap() []error { return []error{e.err, errUsage} }

// readAnswer reads one line from r, the terminal, until ctx ends: main
// catches Ctrl-C and SIGTERM to end a move cleanly, so a prompt that only
// waited for the line could not be interrupted. The read goes on in the
// background after an interrupt; the process exits right after.
func readAnswer(ctx context.Context, r io.Reader) (string, error) {
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		answer <- line
	}()
	select {
	case line := <-answer:
		return line, nil
	case <-ctx.Done():
		return "", fmt.Errorf("shardis: %w", ctx.Err())
	}
}

// printFinish says whether the move ended the migration (reshard.Options.Finish).
func printFinish(w io.Writer, rep *reshard.Report) {
	if rep.Finished {
		fmt.Fprintln(w, "finished: no process uses the migration any more; fence cleared")
		return
	}
	if len(rep.Remaining) == 0 {
		return
	}
	fmt.Fprintf(w, "fence kept: %d connection(s) still use the migration, e.g. %s on %s (%s)\n",
		len(rep.Remaining), rep.Remaining[0].Name, rep.Remaining[0].Node, rep.Remaining[0].Reason)
	fmt.Fprintln(w, "once every process runs the new config: shardis reshard --from OLD --to NEW --finish")
}

// checkModeFlags refuses, with --arm, --finish or --clear-fence, a flag
// that mode would drop without a word: the move's pace and path (--rate,
// --batch, --max-block, --timeout, --dump) and, for --finish and
// --clear-fence, --allow-unnamed and --skip-probe, which only arming
// reads ("--finish --allow-unnamed" did not pass unnamed connections).
// --yes and --quiet mean nothing there either, but change nothing: a
// script may give them to every run.
func checkModeFlags(fs *flag.FlagSet, armOnly, finish, clearFence bool) error {
	mode := ""
	switch {
	case armOnly:
		mode = "--arm"
	case finish:
		mode = "--finish"
	case clearFence:
		mode = "--clear-fence"
	default:
		return nil
	}
	for _, name := range []string{"rate", "batch", "max-block", "timeout", "dump"} {
		if flagSet(fs, name) {
			return fmt.Errorf("%w: --%s means nothing with %s, which moves no key; leave it out", errUsage, name, mode)
		}
	}
	for _, name := range []string{"allow-unnamed", "skip-probe"} {
		if !armOnly && flagSet(fs, name) {
			return fmt.Errorf("%w: --%s means nothing with %s (only the move and --arm read it); leave it out", errUsage, name, mode)
		}
	}
	return nil
}

// flagSet reports whether the flag name was given on the command line
// (fs parsed), even with an empty value.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// count returns how many of flags are set.
func count(flags ...bool) int {
	n := 0
	for _, f := range flags {
		if f {
			n++
		}
	}
	return n
}

// loadTopology reads a config file, or a URL when arg has a scheme.
func loadTopology(arg string) (shard.Config, error) {
	if strings.Contains(arg, "://") {
		return shard.ParseURL(arg)
	}
	if _, err := os.Stat(arg); err != nil && addrkey.HasCredentials(arg) {
		// "user:password@host:port" given for a config: the file's
		// error would quote it whole.
		return shard.Config{}, fmt.Errorf("%w: %q: no config file of that name can be read; an address with credentials goes in a URL "+
			"(redis-ring://user:password@host:port)", shard.ErrBadConfig, redactArg(arg))
	}
	return shard.LoadConfig(arg)
}

// describe names a topology without secrets.
func describe(cfg shard.Config) string {
	if cfg.Mode == shard.ModeCluster {
		return "cluster " + strings.Join(cfg.Seeds, ",")
	}
	addrs := make([]string, len(cfg.Shards))
	for i, s := range cfg.Shards {
		addrs[i] = s.Label()
	}
	return "ring " + strings.Join(addrs, ",")
}

// Below these paces a move barely moves (1e-300 keys/s was taken, and
// would move no key): --rate refuses them.
const (
	minRateKeys  = 1    // keys per second
	minRateBytes = 1024 // bytes per second
)

// parseRate reads --rate: a number of keys per second, or of bytes per
// second with a KB/MB/GB suffix; at least minRateKeys or minRateBytes.
func parseRate(s string) (keys, bytes float64, err error) {
	s = strings.TrimSuffix(strings.TrimSpace(s), "/s")
	if s == "" {
		return 0, 0, nil
	}
	mult := map[string]float64{"GB": 1 << 30, "MB": 1 << 20, "KB": 1 << 10, "B": 1}
	for _, suf := range []string{"GB", "MB", "KB", "B"} {
		if num, ok := strings.CutSuffix(strings.ToUpper(s), suf); ok {
			v, err := strconv.ParseFloat(num, 64)
			v *= mult[suf] // a number near the largest float overflows here
			if err != nil || !(v > 0) || math.IsInf(v, 0) {
				return 0, 0, fmt.Errorf("--rate %q: want a positive number such as 20MB/s", s)
			}
			if v < minRateBytes {
				return 0, 0, fmt.Errorf("--rate %q: want at least 1KB/s", s)
			}
			return 0, v, nil
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return 0, 0, fmt.Errorf("--rate %q: want keys per second (5000) or bytes per second (20MB/s)", s)
	}
	if v < minRateKeys {
		return 0, 0, fmt.Errorf("--rate %q: want at least 1 key per second", s)
	}
	return v, 0, nil
}

// isTerminal reports whether r (a reader or a writer) is a terminal: a
// prompt can be answered, a progress bar redrawn in place.
func isTerminal(r any) bool {
	f, ok := r.(*os.File)
	return ok && isTTY(f) // terminal_*.go
}

// logEvery is how often the progress is written when it goes to a file
// or a pipe rather than a terminal.
const logEvery = 10 * time.Second

// reshardBar draws the mover's progress: the keys scanned of the total,
// the rate and the time left. On a terminal it is a bar redrawn in place
// on one line; otherwise (a log file, a pipe, a journal) it is one plain
// line every logEvery and one at the end, so that a long run does not
// write one line of megabytes of carriage returns.
type reshardBar struct {
	w    io.Writer
	tty  bool
	ctx  context.Context  // the move's: once ended, the last report is of a move interrupted
	dry  bool             // a dry run: the keys counted would move, none did
	now  func() time.Time // time.Now when nil
	last time.Time        // when a line was last written (tty false)
}

// interrupted reports whether the move was interrupted (its last report
// then ends no finished move).
func (b *reshardBar) interrupted() bool { return b.ctx != nil && b.ctx.Err() != nil }

func (b *reshardBar) draw(p reshard.Progress) {
	if !b.tty {
		b.log(p)
		return
	}
	const width = 30
	filled := 0
	if p.Total > 0 {
		filled = int(min(p.Scanned, p.Total) * width / p.Total)
	}
	eta := "--" // not known yet (reshard.Progress.ETA)
	if p.ETA > 0 {
		eta = p.ETA.Round(time.Second).String()
	}
	mb := p.BytesPerSecond / (1 << 20)
	fmt.Fprintf(b.w, "\rreshard [%s%s] %3d%% %d/%d keys, %s, %.0f scanned/s, %.1f MB/s, ETA %s ",
		strings.Repeat("#", filled), strings.Repeat(".", width-filled), percent(int(min(p.Scanned, p.Total)), int(p.Total)),
		p.Scanned, p.Total, b.moved(p), p.KeysPerSecond, mb, eta)
	if p.Done && b.interrupted() {
		fmt.Fprintf(b.w, "interrupted after %v\n", p.Elapsed.Round(time.Millisecond))
	} else if p.Done {
		fmt.Fprintf(b.w, "in %v\n", p.Elapsed.Round(time.Millisecond))
	}
}

// log writes p as one line when logEvery has passed since the last one,
// and always for the first and the last report.
func (b *reshardBar) log(p reshard.Progress) {
	now := time.Now
	if b.now != nil {
		now = b.now
	}
	t := now()
	if !p.Done && !b.last.IsZero() && t.Sub(b.last) < logEvery {
		return
	}
	b.last = t
	eta := "--" // not known yet (reshard.Progress.ETA)
	if p.ETA > 0 {
		eta = p.ETA.Round(time.Second).String()
	}
	mb := p.BytesPerSecond / (1 << 20)
	state := "ETA " + eta
	if p.Done && b.interrupted() {
		state = "interrupted after " + p.Elapsed.Round(time.Millisecond).String()
	} else if p.Done {
		state = "done in " + p.Elapsed.Round(time.Millisecond).String()
	}
	fmt.Fprintf(b.w, "reshard: %d%% %d/%d keys, %s, %.0f scanned/s, %.1f MB/s, %s\n",
		percent(int(min(p.Scanned, p.Total)), int(p.Total)), p.Scanned, p.Total, b.moved(p), p.KeysPerSecond, mb, state)
}

// moved says the keys moved and their pace, or in a dry run the keys
// that would move: a dry run moves none, and "N moved" in its log read
// as keys gone from their node.
func (b *reshardBar) moved(p reshard.Progress) string {
	if b.dry {
		return fmt.Sprintf("%d would move", p.Moved)
	}
	return fmt.Sprintf("%d moved (%.0f keys/s)", p.Moved, movedRate(p))
}

// movedRate is the keys moved per second: the figure that --rate paces.
// Progress.KeysPerSecond is the scan's, keys that stay included (three
// in four when a fourth node joins three), and shown alone it read as a
// pace the mover did not keep. It is the mover's MovedPerSecond, over the
// same span as the scan's rate: the moved keys over Elapsed counted the
// wait for the fence (and any pause long past), and read a fraction of
// the pace kept.
func movedRate(p reshard.Progress) float64 {
	return p.MovedPerSecond
}

func printReport(w io.Writer, rep *reshard.Report, dry bool) {
	verb := "moved"
	if dry {
		verb = "would move"
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FROM\tTO\tKEYS\tBYTES")
	for _, f := range rep.Flows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", f.From, f.To, f.Keys, f.Bytes)
	}
	tw.Flush()
	fmt.Fprintf(w, "scanned %d keys, %s %d (%d bytes measured) in %v", rep.Scanned, verb, rep.Moved, rep.Bytes, rep.Elapsed.Round(time.Millisecond))
	if rep.Busy > 0 {
		fmt.Fprintf(w, "; %d already at their new owner (the old copy was deleted)", rep.Busy)
	}
	if rep.Strays > 0 {
		fmt.Fprintf(w, "; %d stray keys left in place (see shardis verify)", rep.Strays)
	}
	if rep.Rescans > 0 {
		passes := "passes"
		if rep.Rescans == 1 {
			passes = "pass"
		}
		fmt.Fprintf(w, "; %d of them found left behind by the verification and moved in %d more %s", rep.RescanMoved, rep.Rescans, passes)
	}
	fmt.Fprintln(w)
	if v := rep.Verify; v != nil {
		fmt.Fprintf(w, "verify: %d keys scanned, %d misplaced\n", v.Scanned, v.Misplaced)
	}
}

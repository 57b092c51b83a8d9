package e2e

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/shardis/shardis/bench"
	"github.com/shardis/shardis/shard"
)

// ErrBadOptions is wrapped by the errors about Run's inputs.
var ErrBadOptions = errors.New("shardis: bad end-to-end benchmark options")

// DefaultDuration is how long each case runs on each target unless Options
// says otherwise.
const DefaultDuration = 2 * time.Second

// Keyspace is the number of distinct keys the workload uses.
const Keyspace = 20000

// KeyPrefix starts the name of every key the workload writes.
const KeyPrefix = "shardis:bench"

// value is what every SET and MSET writes: 16 bytes.
const value = "0123456789abcdef"

// Options configures Run.
type Options struct {
	// Duration is how long each case runs on each target, after a warm-up
	// of a tenth of it (at most a second); 0 means DefaultDuration.
	Duration time.Duration
	// Cases are the measurements; nil means DefaultCases().
	Cases []Case
	// Progress, when not nil, is called from Run's goroutine when a case
	// starts and then about ten times while it runs.
	Progress func(Progress)
}

// Progress says how far Run is.
type Progress struct {
	// Step counts the cases started, over all targets, from 1; Steps is
	// their total.
	Step, Steps int
	// Fraction is how much of the current case has run, 0 to 1.
	Fraction float64
	// Target and Case name what runs now.
	Target, Case string
}

// Report holds the figures of one end-to-end run. Its JSON form is what
// "shardis bench e2e --json" prints.
type Report struct {
	// Servers says what the targets ran against (see Servers.Description).
	Servers string `json:"servers"`
	// Embedded is true when the servers were in-process miniredis servers.
	Embedded bool `json:"embedded"`
	// Targets are the client configurations measured.
	Targets []Target `json:"targets"`
	// Cases are the cases planned, in order (an interrupted run has
	// results for the first of them only).
	Cases []Case `json:"cases"`
	// DurationSeconds is the planned time of each case on each target.
	DurationSeconds float64 `json:"duration_seconds"`
	// Results holds one entry per case and target: case by case, the
	// targets of a case in the order of Targets.
	Results []Result `json:"results"`
	// Environment describes the machine the clients ran on.
	Environment Environment `json:"environment"`
	// Interrupted is set when the context ended (or the run's time bound
	// passed) before every case ran; Results then holds what was measured.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Environment describes where a run happened.
type Environment struct {
	GoVersion string `json:"go_version"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	CPUs      int    `json:"cpus"`
	// Load is the 1-minute load average before and after the run, e.g.
	// "3.10 -> 4.25" (Linux only; empty elsewhere): other work competes
	// with the measurement for the CPUs.
	Load string `json:"load,omitempty"`
}

// Result holds the figures of one case on one target.
type Result struct {
	Target string `json:"target"`
	Case
	// Ops counts the operations (calls, pipelines, MGETs) that completed
	// without error and with every reply as written (a SET's "OK", a
	// GET's value); Commands the commands or keys they carried.
	Ops      int64 `json:"ops"`
	Commands int64 `json:"commands"`
	// Errors counts the operations that failed or had a reply other than
	// the one written; FirstError is the first failure's message.
	Errors     int64  `json:"errors"`
	FirstError string `json:"first_error,omitempty"`
	// Seconds is the measured time.
	Seconds float64 `json:"seconds"`
	// OpsPerSec and CommandsPerSec are Ops and Commands over Seconds.
	OpsPerSec      float64 `json:"ops_per_sec"`
	CommandsPerSec float64 `json:"commands_per_sec"`
	// P50Micros and P99Micros are the median and 99th percentile of the
	// time one operation took, in microseconds.
	P50Micros float64 `json:"p50_us"`
	P99Micros float64 `json:"p99_us"`
	// Partial is set when the case was cut short by an interruption.
	Partial bool `json:"partial,omitempty"`
}

// Bound returns the longest a Run with these options and targets may
// take: twice the planned time plus a minute for connections, warm-ups and
// slow operations. Run stops there, as if interrupted.
func Bound(targets, cases int, d time.Duration) time.Duration {
	return 2*time.Duration(targets*cases)*(d+warmUp(d)) + time.Minute
}

// Run measures every case on every target, one at a time, each for
// opts.Duration after a warm-up, case by case with the targets of a case
// one after the other. For each target it first creates a client from the
// target's Config (raising Pool.MaxIdle to the largest number of callers
// when it is zero, so that idle connections are not closed between calls)
// and writes every key the cases use, so that every case's SETs overwrite
// existing keys; at the end it deletes the keys. When that deletion fails,
// the error returned wraps ErrCleanup and says how many keys may remain.
//
// Run returns early when ctx ends or Bound passes: the report then holds
// what was measured, the case that was running marked Partial, and
// Interrupted set, and the error is ctx's. Other errors (bad options, a
// target whose client cannot be created or whose servers refuse the
// initial writes) come with the report so far.
func Run(ctx context.Context, targets []Target, opts Options) (rep *Report, err error) {
	d := opts.Duration
	if d == 0 {
		d = DefaultDuration
	}
	if d < 0 {
		return nil, fmt.Errorf("%w: negative duration %v", ErrBadOptions, d)
	}
	cases := opts.Cases
	if cases == nil {
		cases = DefaultCases()
	}
	if len(targets) == 0 || len(cases) == 0 {
		return nil, fmt.Errorf("%w: nothing to measure (%d targets, %d cases)", ErrBadOptions, len(targets), len(cases))
	}
	maxCallers, maxSize := 1, 1
	for _, c := range cases {
		if c.Callers <= 0 || c.Size <= 0 || c.Callers > maxCallersLimit || c.Size > maxSizeLimit {
			return nil, fmt.Errorf("%w: case %q: callers %d and size %d must be in 1..%d and 1..%d",
				ErrBadOptions, c.Name, c.Callers, c.Size, maxCallersLimit, maxSizeLimit)
		}
		switch c.Kind {
		case Single, Pipeline, MSet, MGet:
		default:
			return nil, fmt.Errorf("%w: case %q: unknown kind %q", ErrBadOptions, c.Name, c.Kind)
		}
		maxCallers, maxSize = max(maxCallers, c.Callers), max(maxSize, c.Size)
	}
	rep = &Report{
		Targets:         targets,
		Cases:           cases,
		DurationSeconds: d.Seconds(),
		Environment:     Environment{GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU()},
	}
	load := bench.LoadAverage()
	defer func() { rep.Environment.Load = bench.LoadSpan(load) }()
	ctx, cancel := context.WithTimeout(ctx, Bound(len(targets), len(cases), d))
	defer cancel()
	keys := bench.Keys(KeyPrefix, max(Keyspace, maxSize))
	clients := make([]*shard.Client, 0, len(targets))
	defer func() {
		for i, c := range clients {
			if cerr := cleanup(c, keys); cerr != nil {
				err = errors.Join(err, fmt.Errorf("%s: %w", targets[i].Name, cerr))
			}
			c.Close()
		}
	}()
	for _, t := range targets {
		cfg := t.Config
		if cfg.Pool.MaxIdle == 0 {
			cfg.Pool.MaxIdle = maxCallers
		}
		client, err := shard.New(ctx, cfg)
		if err != nil {
			return finish(ctx, rep, fmt.Errorf("shardis: %s: %w", t.Name, err))
		}
		clients = append(clients, client)
		if err := prefill(ctx, client, keys); err != nil {
			return finish(ctx, rep, fmt.Errorf("shardis: %s: write the keys: %w", t.Name, err))
		}
	}
	// Case by case, every target in turn, so that the targets of one case
	// run close together in time and share whatever else the machine does.
	step, steps := 0, len(targets)*len(cases)
	for _, c := range cases {
		for i, t := range targets {
			if ctx.Err() != nil {
				return finish(ctx, rep, nil)
			}
			step++
			progress := func(f float64) {
				if opts.Progress != nil {
					opts.Progress(Progress{Step: step, Steps: steps, Fraction: f, Target: t.Name, Case: c.Name})
				}
			}
			rep.Results = append(rep.Results, runCase(ctx, clients[i], t.Name, c, keys, d, progress))
		}
	}
	if ctx.Err() != nil {
		return finish(ctx, rep, nil)
	}
	return rep, nil
}

// finish marks an interrupted report and picks the error to return.
func finish(ctx context.Context, rep *Report, err error) (*Report, error) {
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		// The deadline has passed, so the context's timer fires at once;
		// on a loaded machine it may not have run yet when a read that the
		// deadline cut short returns.
		<-ctx.Done()
	}
	if ctx.Err() != nil {
		rep.Interrupted = true
		if err == nil || errors.Is(err, ctx.Err()) {
			return rep, ctx.Err()
		}
	}
	return rep, err
}

const (
	maxCallersLimit = 4096
	maxSizeLimit    = 1_000_000
)

// ErrCleanup is wrapped by the error of a Run that could not delete the
// keys it wrote: some of them may remain on the targets' servers.
var ErrCleanup = errors.New("shardis: benchmark keys not deleted")

// prefill SETs keys in pipelines of 1000 and checks every reply.
func prefill(ctx context.Context, c *shard.Client, keys []string) error {
	p := c.Pipeline()
	for start := 0; start < len(keys); start += 1000 {
		chunk := keys[start:min(start+1000, len(keys))]
		for _, k := range chunk {
			p.Send("SET", k, value)
		}
		res, err := p.Exec(ctx)
		if err != nil {
			return err
		}
		if len(res) != len(chunk) {
			return fmt.Errorf("%w: %d results for a pipeline of %d commands", bench.ErrWorkload, len(res), len(chunk))
		}
		for i, r := range res {
			if err := checkReply("SET", chunk[i], r.Reply, r.Err); err != nil {
				return err
			}
		}
	}
	return nil
}

// cleanupTimeout bounds cleanup, whatever happened to the run's context.
const cleanupTimeout = 10 * time.Second

// cleanup deletes the workload's keys, within cleanupTimeout. Its error
// wraps ErrCleanup and counts the keys whose DEL failed or went
// unanswered: they may remain.
func cleanup(c *shard.Client, keys []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	p := c.Pipeline()
	var sizes []int
	for start := 0; start < len(keys); start += 1000 {
		args := make([]any, 0, 1000)
		for _, k := range keys[start:min(start+1000, len(keys))] {
			args = append(args, k)
		}
		p.Send("DEL", args...)
		sizes = append(sizes, len(args))
	}
	res, err := p.Exec(ctx)
	left, first := 0, err
	for i, n := range sizes {
		if err != nil || i >= len(res) {
			left += n
			continue
		}
		if res[i].Err != nil {
			left += n
			if first == nil {
				first = res[i].Err
			}
		}
	}
	if left == 0 {
		return nil
	}
	if first == nil {
		first = fmt.Errorf("%d results for %d DELs", len(res), len(sizes))
	}
	return fmt.Errorf("%w: up to %d of the %d keys %s:*:pf may remain (delete them with DEL or UNLINK): %w",
		ErrCleanup, left, len(keys), KeyPrefix, first)
}

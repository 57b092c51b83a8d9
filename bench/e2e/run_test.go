package e2e

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// smallCases are few and small, so that a run takes well under a second
// per target.
var smallCases = Cases([]int{1, 8}, []int{1000}, []int{100})

func checkResults(t *testing.T, rep *Report, targets []string, cases []Case) {
	t.Helper()
	require.Len(t, rep.Results, len(targets)*len(cases))
	i := 0
	for _, c := range cases {
		for _, target := range targets {
			r := rep.Results[i]
			i++
			assert.Equal(t, target, r.Target)
			assert.Equal(t, c, r.Case)
			assert.Zero(t, r.Errors, "%s %s: %s", target, c.Name, r.FirstError)
			assert.Positive(t, r.Ops, "%s %s", target, c.Name)
			assert.Equal(t, r.Ops*int64(c.Commands()), r.Commands)
			assert.InDelta(t, float64(r.Commands)/r.Seconds, r.CommandsPerSec, 1e-6*r.CommandsPerSec)
			assert.Positive(t, r.P50Micros)
			assert.LessOrEqual(t, r.P50Micros, r.P99Micros)
			assert.False(t, r.Partial)
		}
	}
}

func TestRunOnRealServers(t *testing.T) {
	redistest.Require(t)
	ctx := context.Background()
	s, err := Start(ctx)
	require.NoError(t, err)
	defer s.Close()
	assert.False(t, s.Embedded)
	assert.Contains(t, s.Description, "redis-server")
	targets := s.Targets()
	require.Len(t, targets, 2)

	var steps []Progress
	rep, err := Run(ctx, targets, Options{Duration: 100 * time.Millisecond, Cases: smallCases,
		Progress: func(p Progress) { steps = append(steps, p) }})
	require.NoError(t, err)
	checkResults(t, rep, []string{"ring", "cluster"}, smallCases)
	assert.False(t, rep.Interrupted)
	assert.Equal(t, smallCases, rep.Cases)
	assert.Equal(t, 0.1, rep.DurationSeconds)
	require.NotEmpty(t, steps)
	assert.Equal(t, len(smallCases)*2, steps[len(steps)-1].Step)
	assert.Equal(t, 1.0, steps[len(steps)-1].Fraction)

	// The workload deleted its keys.
	for _, target := range targets {
		for _, addr := range append(target.Config.Seeds, shardAddrs(target)...) {
			assert.Equal(t, 0, dbsize(t, addr), "keys left on %s", addr)
		}
	}
}

func TestRunOnEmbeddedServers(t *testing.T) {
	s, err := startEmbedded()
	require.NoError(t, err)
	defer s.Close()
	assert.True(t, s.Embedded)
	assert.Contains(t, s.Description, "EMBEDDED")
	rep, err := Run(context.Background(), s.Targets(), Options{Duration: 50 * time.Millisecond, Cases: smallCases})
	require.NoError(t, err)
	checkResults(t, rep, []string{"ring", "cluster"}, smallCases)
	if runtime.GOOS == "linux" {
		assert.Regexp(t, `^\d+\.\d+ -> \d+\.\d+$`, rep.Environment.Load)
	}
	require.NoError(t, s.Close())
	require.NoError(t, s.Close(), "Close is idempotent")
}

func TestRunStopsOnInterrupt(t *testing.T) {
	s, err := startEmbedded()
	require.NoError(t, err)
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	// Interrupt in the middle of the third case.
	const each = 2 * time.Second
	opts := Options{Duration: each, Cases: smallCases, Progress: func(p Progress) {
		if p.Step == 3 && p.Fraction > 0 {
			cancel()
		}
	}}
	start := time.Now()
	rep, err := Run(ctx, s.Targets(), opts)
	assert.ErrorIs(t, err, context.Canceled)
	// Two cases and a piece of the third, with their warm-ups: less than
	// the measurements planned (two targets, every case) take without
	// their warm-ups, with a margin of about 15 s for a loaded machine.
	assert.Less(t, time.Since(start), time.Duration(2*len(smallCases))*each)
	require.NotNil(t, rep)
	assert.True(t, rep.Interrupted)
	// The first case on both targets, the second cut short on the first.
	require.Len(t, rep.Results, 3)
	assert.False(t, rep.Results[0].Partial)
	assert.Equal(t, []string{"ring", "cluster", "ring"},
		[]string{rep.Results[0].Target, rep.Results[1].Target, rep.Results[2].Target})
	assert.True(t, rep.Results[2].Partial)
	assert.Zero(t, rep.Results[2].Errors, rep.Results[2].FirstError)
}

func TestRunReportsFailingServers(t *testing.T) {
	s, err := startEmbedded()
	require.NoError(t, err)
	targets := s.Targets()[:1]
	s.Close() // every command now fails to connect
	rep, err := Run(context.Background(), targets, Options{Duration: 50 * time.Millisecond, Cases: smallCases})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "write the keys")
	assert.Empty(t, rep.Results)
}

func TestRunRejectsBadOptions(t *testing.T) {
	s, err := startEmbedded()
	require.NoError(t, err)
	defer s.Close()
	for name, c := range map[string]struct {
		targets []Target
		opts    Options
	}{
		"no targets":      {nil, Options{}},
		"no cases":        {s.Targets(), Options{Cases: []Case{}}},
		"negative time":   {s.Targets(), Options{Duration: -time.Second}},
		"zero callers":    {s.Targets(), Options{Cases: []Case{{Name: "x", Kind: Single, Size: 1}}}},
		"unknown kind":    {s.Targets(), Options{Cases: []Case{{Name: "x", Kind: "scan", Callers: 1, Size: 1}}}},
		"huge pipeline":   {s.Targets(), Options{Cases: []Case{{Name: "x", Kind: Pipeline, Callers: 1, Size: 2_000_000}}}},
		"too many caller": {s.Targets(), Options{Cases: []Case{{Name: "x", Kind: Single, Callers: 5000, Size: 1}}}},
	} {
		t.Run(name, func(t *testing.T) {
			rep, err := Run(context.Background(), c.targets, c.opts)
			assert.ErrorIs(t, err, ErrBadOptions)
			assert.True(t, strings.HasPrefix(err.Error(), "shardis: "))
			assert.Nil(t, rep)
		})
	}
}

func TestPercentile(t *testing.T) {
	hundred := make([]int64, 100)
	for i := range hundred {
		hundred[i] = int64(i+1) * 1000
	}
	for _, c := range []struct {
		samples []int64
		p       int
		want    float64
	}{
		{nil, 50, 0},
		{[]int64{5000}, 50, 5},
		{[]int64{5000}, 99, 5},
		{hundred, 50, 50},
		{hundred, 99, 99},
		{hundred[:10], 99, 10},
		{hundred[:10], 50, 5},
	} {
		p50, p99 := latencies([]*caller{{seen: int64(len(c.samples)), samples: c.samples}})
		got := p50
		if c.p == 99 {
			got = p99
		}
		assert.Equal(t, c.want, got, "%v p%d", len(c.samples), c.p)
	}
}

func TestCasesAndSizes(t *testing.T) {
	cs := DefaultCases()
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	assert.Equal(t, []string{"single c=1", "single c=16", "single c=64", "pipeline 1k", "pipeline 10k",
		"MSET 100", "MGET 100", "MSET 1k", "MGET 1k"}, names)
	assert.Equal(t, 1, cs[0].Commands())
	assert.Equal(t, 10000, cs[4].Commands())

	got, err := ParseSizes("1, 16,1k,2500", 100000)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 16, 1000, 2500}, got)
	got, err = ParseSizes(" ", 10)
	require.NoError(t, err)
	assert.Nil(t, got)
	for _, bad := range []string{"0", "-1", "x", "1,,2", "11", "1k"} {
		_, err := ParseSizes(bad, 10)
		assert.ErrorIs(t, err, ErrBadOptions, bad)
	}
}

func TestBound(t *testing.T) {
	assert.Equal(t, 2*18*(2200*time.Millisecond)+time.Minute, Bound(2, 9, 2*time.Second))
	assert.True(t, errors.Is(ErrBadOptions, ErrBadOptions))
}

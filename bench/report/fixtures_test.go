package report

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/bench/e2e"
	"github.com/shardis/shardis/bench/placement"
	"github.com/stretchr/testify/require"
)

// placementReport runs a small real comparison of every strategy.
func placementReport(t *testing.T) *placement.Report {
	t.Helper()
	keys, err := placement.GenerateKeys(placement.DefaultPattern, 5000)
	require.NoError(t, err)
	r, err := placement.Run(context.Background(), keys, placement.Options{
		LookupTime: time.Millisecond,
		KeySource:  "generated",
		Layouts:    []placement.Layout{placement.EqualLayout(3), placement.EqualLayout(10), placement.WeightedLayout(1, 3)},
	})
	require.NoError(t, err)
	return r
}

// e2eReport is a hand-made end-to-end report with two targets.
func e2eReport() *e2e.Report {
	r := &e2e.Report{
		Servers:         "test servers",
		Targets:         []e2e.Target{{Name: "ring", Servers: "three"}, {Name: "cluster", Servers: "a cluster"}},
		DurationSeconds: 0.5,
	}
	for i, c := range e2e.Cases([]int{1, 16}, []int{1000}, []int{100}) {
		for j, target := range []string{"ring", "cluster"} {
			ops := int64(1000 * (i + 1) * (j + 1))
			r.Results = append(r.Results, e2e.Result{
				Target: target, Case: c, Ops: ops, Commands: ops * int64(c.Commands()), Seconds: 0.5,
				OpsPerSec: float64(ops) * 2, CommandsPerSec: float64(ops*int64(c.Commands())) * 2,
				P50Micros: 100 * float64(i+1), P99Micros: 900 * float64(i+1),
			})
		}
	}
	return r
}

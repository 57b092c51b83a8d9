package e2e

import (
	"slices"
	"testing"
)

func repeatNs(ns int64, n int) []int64 { return slices.Repeat([]int64{ns}, n) }

// The latency figures are those of every operation timed, however the
// callers sampled them: a caller that kept 10 samples of 1,000 fast
// operations weighs 100 times one that kept 10 of its 10 slow ones.
func TestReview19LatenciesWeighEveryOperation(t *testing.T) {
	tests := []struct {
		name     string
		callers  []*caller
		p50, p99 float64 // µs, worked out by hand
	}{
		{
			// 1,010 operations: 1,000 of 1 µs, then 10 of 100 µs. p50 is
			// the 505th, p99 the 1,000th (ceil(1,010 × 0.99)): both 1 µs.
			name: "a fast caller sampled, a slow one not",
			callers: []*caller{
				{seen: 1000, samples: repeatNs(1000, 10)},
				{seen: 10, samples: repeatNs(100_000, 10)},
			},
			p50: 1, p99: 1,
		},
		{
			// 200 operations, each caller kept all of its own: 100 of 2 µs,
			// 100 of 4 µs. p50 the 100th (2 µs), p99 the 198th (4 µs).
			name: "no sampling",
			callers: []*caller{
				{seen: 100, samples: repeatNs(2000, 100)},
				{seen: 100, samples: repeatNs(4000, 100)},
			},
			p50: 2, p99: 4,
		},
		{
			// 200 operations: 100 of 3 µs (all kept) and 100 of 5 µs (one
			// sample kept). p50 is the 100th (3 µs), p99 the 198th (5 µs);
			// the 101 samples counted alike would put p99 at 3 µs.
			name: "a slow caller sampled down to one",
			callers: []*caller{
				{seen: 100, samples: repeatNs(5000, 1)},
				{seen: 100, samples: repeatNs(3000, 100)},
			},
			p50: 3, p99: 5,
		},
		{
			name:    "no samples",
			callers: []*caller{{}},
			p50:     0, p99: 0,
		},
	}
	for _, tc := range tests {
		p50, p99 := latencies(tc.callers)
		if p50 != tc.p50 || p99 != tc.p99 {
			t.Errorf("%s: p50 %v µs, p99 %v µs; want %v and %v", tc.name, p50, p99, tc.p50, tc.p99)
		}
	}
}

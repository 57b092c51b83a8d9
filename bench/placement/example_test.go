package placement_test

import (
	"context"
	"fmt"
	"time"

	"github.com/shardis/shardis/bench/placement"
)

// Compare how many keys move when a fourth server joins three.
func Example() {
	keys, err := placement.GenerateKeys("user:{id}:profile", 30000)
	if err != nil {
		panic(err)
	}
	rep, err := placement.Run(context.Background(), keys, placement.Options{
		Strategies: []string{"murmur3", "modula", "slots"},
		Layouts:    []placement.Layout{placement.EqualLayout(3)},
		LookupTime: time.Millisecond,
	})
	if err != nil {
		panic(err)
	}
	for _, r := range rep.Results {
		fmt.Printf("%-8s moved %2.0f%% (ideal %2.0f%%), between old shards %2.0f%%\n",
			r.Strategy, r.Add.MovedPct, r.Add.IdealPct, r.Add.BetweenSurvivorsPct)
	}
	// Output:
	// murmur3  moved 25% (ideal 25%), between old shards  0%
	// modula   moved 75% (ideal 25%), between old shards 50%
	// slots    moved 25% (ideal 25%), between old shards  0%
}

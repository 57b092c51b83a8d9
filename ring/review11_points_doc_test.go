package ring_test

import (
	"testing"

	"github.com/shardis/shardis/ring"
)

// The README and docs/placement.md state how many points each placement
// gives a shard: 160 × weight for jedis and jedis-legacy, 1024 × weight
// for murmur3, and for twemproxy's ketama floor(w/W × 40 × n) × 4 — about
// 160 per server scaled by its share of the total weight, not 160 × weight.
// Counts worked out by hand for weights 2 and 1 (W = 3, n = 2):
// ketama gives floor(53.3) × 4 = 212 and floor(26.7) × 4 = 104.
func TestReview11PointsPerShardAsDocumented(t *testing.T) {
	shards := []ring.Shard{
		{Name: "a", Addr: "10.0.0.1:6379", Weight: 2},
		{Name: "b", Addr: "10.0.0.2:6379", Weight: 1},
	}
	for _, tt := range []struct {
		alg  ring.Algorithm
		want int
	}{
		{ring.Jedis, 160 * 3},
		{ring.JedisLegacy, 160 * 3},
		{ring.Murmur3, 1024 * 3},
		{ring.Ketama, 212 + 104},
		{ring.Modula, 3}, // one slot per unit of weight
	} {
		r, err := ring.New(ring.Config{Algorithm: tt.alg, Shards: shards})
		if err != nil {
			t.Fatalf("%s: %v", tt.alg, err)
		}
		if got := r.Points(); got != tt.want {
			t.Errorf("%s: %d points, want %d", tt.alg, got, tt.want)
		}
	}
}

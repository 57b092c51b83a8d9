package ring

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
)

// pointShards returns n shards of weight w on distinct addresses, named
// when named is set.
func pointShards(n, w int, named bool) []Shard {
	s := make([]Shard, n)
	for i := range s {
		s[i] = Shard{Addr: fmt.Sprintf("10.%d.%d.%d:6379", i>>16, (i>>8)&255, i&255), Weight: w}
		if named {
			s[i].Name = fmt.Sprintf("shard-%d", i)
		}
	}
	return s
}

// allocatedBy returns the bytes fn allocates.
func allocatedBy(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// The bound on a ring's points is 4,194,304 (MaxPoints): a ring past it is
// refused with ErrTooManyPoints before its points are allocated, whatever
// the algorithm; the sizes the project supports (1,000 shards of weights
// 1 to 4, 4,096,000 murmur3 points at weight 4 each) are built.
func TestReview18PointBound(t *testing.T) {
	if MaxPoints != 4_194_304 {
		t.Errorf("MaxPoints = %d, want the documented 4,194,304", MaxPoints)
	}
	refused := []struct {
		name string
		cfg  Config
	}{
		{"murmur3 one shard of weight 16384", Config{Shards: pointShards(1, 16384, false)}},
		{"murmur3 one shard of weight 4097", Config{Shards: pointShards(1, 4097, false)}},
		{"murmur3 1000 shards of weight 5", Config{Shards: pointShards(1000, 5, true)}},
		{"murmur3 1000 shards of weight 10000", Config{Shards: pointShards(1000, 10000, true)}},
		{"jedis one shard of weight 104857", Config{Algorithm: Jedis, Shards: pointShards(1, 104857, false)}},
		{"jedis md5 1000 shards of weight 100", Config{Algorithm: Jedis, KeyHash: "md5", Shards: pointShards(1000, 100, true)}},
		{"jedis-legacy 2 shards of weight 13108", Config{Algorithm: JedisLegacy, Shards: pointShards(2, 13108, true)}},
		{"ketama 100000 servers", Config{Algorithm: Ketama, Shards: pointShards(100000, 1, false)}},
		{"ketama 26215 servers", Config{Algorithm: Ketama, Shards: pointShards(26215, 1, false)}},
		{"modula one shard of weight 1<<24", Config{Algorithm: Modula, Shards: pointShards(1, 1<<24, false)}},
		{"modula weights summing past the bound", Config{Algorithm: Modula, Shards: pointShards(2, 1<<21+1, false)}},
	}
	for _, c := range refused {
		t.Run("refused/"+c.name, func(t *testing.T) {
			// The shard list itself (up to 100,000 entries, validated
			// with maps) is the only allocation allowed.
			limit := uint64(len(c.cfg.Shards))*1024 + 1<<20
			var err error
			n := allocatedBy(func() { _, err = New(c.cfg) })
			if !errors.Is(err, ErrTooManyPoints) {
				t.Fatalf("New: %v, want ErrTooManyPoints", err)
			}
			if n > limit {
				t.Fatalf("New allocated %d bytes before refusing, want at most %d", n, limit)
			}
		})
	}
	accepted := []struct {
		name   string
		cfg    Config
		points int
	}{
		{"murmur3 1000 shards of weight 4", Config{Shards: pointShards(1000, 4, true)}, 1000 * 4 * Murmur3PointsPerWeight},
		{"murmur3 one shard of weight 4096", Config{Shards: pointShards(1, 4096, false)}, 4096 * Murmur3PointsPerWeight},
		{"jedis 1000 shards of weight 4", Config{Algorithm: Jedis, Shards: pointShards(1000, 4, true)}, 1000 * 4 * JedisPointsPerWeight},
		{"ketama 1000 shards of weight 10000", Config{Algorithm: Ketama, Shards: pointShards(1000, 10000, true)}, 0},
		{"modula one shard of weight 1<<22", Config{Algorithm: Modula, Shards: pointShards(1, 1<<22, false)}, 1 << 22},
	}
	for _, c := range accepted {
		t.Run("accepted/"+c.name, func(t *testing.T) {
			r, err := New(c.cfg)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			// Collisions may merge a few points; none is lost otherwise.
			if c.points > 0 && (r.Points() > c.points || r.Points() < c.points-16) {
				t.Fatalf("%d points, want about %d", r.Points(), c.points)
			}
		})
	}
}

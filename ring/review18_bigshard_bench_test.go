package ring

import "testing"

// Building a ring of one shard with ring.MaxPoints points: a jedis md5
// shard of weight 26,214 and a murmur3 shard of weight 4,096.
func BenchmarkReview18BuildOneHugeShard(b *testing.B) {
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"jedis-md5", Config{Algorithm: Jedis, KeyHash: "md5", Shards: []Shard{{Name: "big", Addr: "10.0.0.1:6379", Weight: MaxPoints / JedisPointsPerWeight}}}},
		{"murmur3", Config{Algorithm: Murmur3, Shards: []Shard{{Addr: "10.0.0.1:6379", Weight: MaxPoints / Murmur3PointsPerWeight}}}},
		{"jedis-two", Config{Algorithm: Jedis, Shards: []Shard{{Addr: "10.0.0.1:6379", Weight: 20000}, {Addr: "10.0.0.2:6379", Weight: 100}}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			defer reportCPU(b)()
			for b.Loop() {
				if _, err := New(c.cfg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

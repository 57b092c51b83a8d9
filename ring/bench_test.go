package ring

import "testing"

func benchmarkLocate(b *testing.B, shards int) {
	keys := sampleKeys(1024)
	for _, alg := range []Algorithm{Murmur3, Jedis, Ketama, Modula} {
		r := mustNew(b, Config{Algorithm: alg, Shards: shardsN(shards)})
		b.Run(string(alg), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				r.Locate(keys[i&1023])
				i++
			}
		})
		b.Run(string(alg)+"/bytes", func(b *testing.B) {
			bkeys := make([][]byte, len(keys))
			for i, k := range keys {
				bkeys[i] = []byte(k)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				r.LocateBytes(bkeys[i&1023])
				i++
			}
		})
	}
}

func BenchmarkLocate10(b *testing.B)  { benchmarkLocate(b, 10) }
func BenchmarkLocate100(b *testing.B) { benchmarkLocate(b, 100) }

func BenchmarkNew(b *testing.B) {
	for _, alg := range []Algorithm{Murmur3, Jedis, Ketama} {
		b.Run(string(alg), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				mustNew(b, Config{Algorithm: alg, Shards: shardsN(100)})
			}
		})
	}
}

//go:build unix

package ring

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// weightedShards returns n shards with weights 1 to 4 in turn, named and
// addressed the way a large deployment would be.
func weightedShards(n int) []Shard {
	shards := make([]Shard, n)
	for i := range shards {
		shards[i] = Shard{
			Name:   fmt.Sprintf("cache-%04d", i),
			Addr:   fmt.Sprintf("10.%d.%d.%d:6379", i>>16&255, i>>8&255, i&255),
			Weight: 1 + i%4,
		}
	}
	return shards
}

// BenchmarkScaleRing builds rings of 1,000 shards of weights 1 to 4
// (2,500 weight units: 2.56 million points with murmur3's 1024 per unit,
// 400,000 with Jedis's and ketama's 160) and looks up random 16-byte keys
// in them. build reports the time and allocated bytes of New, and
// heap-B the heap the finished ring keeps, and cpu-ms/op the process's
// CPU time per build (on a loaded machine elapsed time also counts the
// wait for a core); lookup reports ns per Locate of keys spread over the
// whole key space (cache misses included).
func BenchmarkScaleRing(b *testing.B) {
	shards := weightedShards(1000)
	rng := rand.New(rand.NewPCG(1, 2))
	keys := make([]string, 1<<16)
	for i := range keys {
		keys[i] = fmt.Sprintf("%016x", rng.Uint64())
	}
	for _, alg := range []Algorithm{Murmur3, Jedis, Ketama} {
		cfg := Config{Algorithm: alg, Shards: shards}
		b.Run(string(alg)+"/build", func(b *testing.B) {
			b.ReportAllocs()
			report := reportCPU(b)
			for b.Loop() {
				mustNew(b, cfg)
			}
			report()
			b.ReportMetric(float64(retained(b, cfg)), "heap-B")
		})
		r := mustNew(b, cfg)
		b.Run(string(alg)+"/lookup", func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				r.Locate(keys[i&(len(keys)-1)])
				i++
			}
		})
	}
}

// retained returns the heap bytes a ring built from cfg keeps alive.
func retained(tb testing.TB, cfg Config) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := mustNew(tb, cfg)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(r)
	if after.HeapAlloc < before.HeapAlloc {
		return 0
	}
	return after.HeapAlloc - before.HeapAlloc
}

// reportCPU starts counting the process's CPU time; the function it
// returns reports it per operation, as cpu-ms/op.
func reportCPU(b *testing.B) func() {
	cpu := processCPU()
	return func() {
		b.ReportMetric(float64((processCPU()-cpu).Microseconds())/1e3/float64(b.N), "cpu-ms/op")
	}
}

// processCPU returns the CPU time (user plus system) this process has
// used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

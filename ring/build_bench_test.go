package ring

import "testing"

// The parts of building a murmur3 ring of 1,000 shards of weights 1 to 4
// (2.56 million points), one by one.

func BenchmarkBuildParts(b *testing.B) {
	shards := weightedShards(1000)
	pts, err := murmur3Points(shards)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("hash", func(b *testing.B) {
		pos := make([]uint64, 4096)
		defer reportCPU(b)()
		for b.Loop() {
			for i := range 625 {
				murmur3Labels(pos, shards[i%len(shards)].Label()+"-", 0)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(625*4096), "ns/point")
	})
	b.Run("sort", func(b *testing.B) {
		pos, own := make([]uint64, len(pts.pos)), make([]int32, len(pts.own))
		defer reportCPU(b)()
		for b.Loop() {
			copy(pos, pts.pos)
			copy(own, pts.own)
			sortRing(pos, own, tieSmallestLabel(shards))
		}
	})
	b.Run("index", func(b *testing.B) {
		pos, own := sortRing(pts.pos, pts.own, tieSmallestLabel(shards))
		defer reportCPU(b)()
		for b.Loop() {
			newBucketIndex(pos, 0, 0).withOwners(pos, own)
		}
	})
}

package ring

import (
	"runtime"
	"sync"
)

// parallelPoints is the number of points from which a ring's build is
// shared among goroutines; below it, starting them costs more than it
// saves.
const parallelPoints = 1 << 16

// shardRun is a run of consecutive shards, [from, to), whose points start
// at index at of the ring's points and number points.
type shardRun struct {
	from, to, at, points int
}

// shardRuns splits the shards, of perWeight*Weight points each, into runs
// of about the same number of points, one per goroutine that builds them:
// up to GOMAXPROCS for large rings, one for the others.
func shardRuns(shards []Shard, perWeight, total int) []shardRun {
	workers := max(1, min(runtime.GOMAXPROCS(0), len(shards), total/parallelPoints*2))
	var runs []shardRun
	from, at, share := 0, 0, (total+workers-1)/workers
	for w := 0; w < workers && from < len(shards); w++ {
		to, end := from, at
		for to < len(shards) && (end-at < share || w == workers-1) {
			end += shards[to].Weight * perWeight
			to++
		}
		runs = append(runs, shardRun{from: from, to: to, at: at, points: end - at})
		from, at = to, end
	}
	return runs
}

// forEachShard calls fill(i, pos, buf) for every shard i, where pos is the
// shard's range of pts.pos: perWeight*Weight points, shard after shard in
// list order, and buf a buffer for fill's own use, shared by the calls of
// one goroutine. It first sets the owners of every range. Large rings are
// filled by several goroutines, one per shardRun; every range is written
// by exactly one call, so the result does not depend on how the work was
// shared.
func forEachShard(shards []Shard, perWeight int, pts ringPoints, fill func(i int, pos []uint64, buf *[]byte)) {
	runs := shardRuns(shards, perWeight, len(pts.pos))
	parallel(len(runs), func(w int) {
		at := runs[w].at
		var buf []byte
		for i := runs[w].from; i < runs[w].to; i++ {
			n := shards[i].Weight * perWeight
			own := pts.own[at : at+n]
			for j := range own {
				own[j] = int32(i)
			}
			fill(i, pts.pos[at:at+n], &buf)
			at += n
		}
	})
}

// sortWorkers returns the number of goroutines that sort n points.
func sortWorkers(n int) int {
	return max(1, min(runtime.GOMAXPROCS(0), n/parallelPoints*2, 1<<sortBits1))
}

// parallel calls fn(w) for w from 0 to workers-1, on goroutines of their
// own when there is more than one, and returns when all have returned.
func parallel(workers int, fn func(w int)) {
	if workers == 1 {
		fn(0)
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { fn(w) })
	}
	wg.Wait()
}

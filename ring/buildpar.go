package ring

import (
	"runtime"
	"slices"
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

// forEachShard calls fill(i, first, pos, buf) for runs of the points of
// every shard i, which are perWeight*Weight points each, shard after shard
// in list order in pts.pos: pos is the part of shard i's range that holds
// its points first, first+1, ..., and buf a buffer for fill's own use,
// shared by the calls of one goroutine. It first sets the owners of that
// part. Large rings are filled by several goroutines, each taking an equal
// share of the points, so that a shard larger than the others (or the only
// one) is shared among them too; every point is written by exactly one
// call, and a point's position depends only on its shard and number, so
// the result does not depend on how the work was shared.
func forEachShard(shards []Shard, perWeight int, pts ringPoints, fill func(i, first int, pos []uint64, buf *[]byte)) {
	total := len(pts.pos)
	start := make([]int, len(shards)+1) // shard i's points are [start[i], start[i+1])
	for i, s := range shards {
		start[i+1] = start[i] + s.Weight*perWeight
	}
	workers := max(1, min(runtime.GOMAXPROCS(0), total/parallelPoints*2))
	parallel(workers, func(w int) {
		lo, hi := total*w/workers, total*(w+1)/workers
		// The shard that holds point lo: the first that ends after it.
		i, _ := slices.BinarySearch(start[1:], lo+1)
		var buf []byte
		for at := lo; at < hi; i++ {
			end := min(hi, start[i+1])
			if end == at {
				continue // a shard of no points
			}
			own := pts.own[at:end]
			for j := range own {
				own[j] = int32(i)
			}
			fill(i, at-start[i], pts.pos[at:end], &buf)
			at = end
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

package ring

import (
	"runtime"
	"sync"
)

// parallelPoints is the number of points from which a ring's build is
// shared among goroutines; below it, starting them costs more than it
// saves.
const parallelPoints = 1 << 16

// pointRun is one goroutine's share of a ring's points while it is built:
// the points at indexes [at, at+points), which are those of the shards
// from to to-1, the first of them from its point first on, the last of
// them up to where the share ends. A shard larger than a share is split
// among runs.
type pointRun struct {
	from, to, first, at, points int
}

// pointRuns splits the points of the shards, perWeight*Weight of each,
// shard after shard, total in all, into runs of the same number of points
// (within one), one per goroutine that builds them: up to GOMAXPROCS for
// large rings, one for the others.
func pointRuns(shards []Shard, perWeight, total int) []pointRun {
	workers := max(1, min(runtime.GOMAXPROCS(0), total/parallelPoints*2))
	runs := make([]pointRun, 0, workers)
	i, start := 0, 0 // shard i's points start at index start
	for w := range workers {
		lo, hi := total*w/workers, total*(w+1)/workers
		if lo == hi {
			continue
		}
		for start+shards[i].Weight*perWeight <= lo { // shard i ends before lo
			start += shards[i].Weight * perWeight
			i++
		}
		r := pointRun{from: i, first: lo - start, at: lo, points: hi - lo}
		j, end := i, start
		for end < hi {
			end += shards[j].Weight * perWeight
			j++
		}
		r.to = j
		runs = append(runs, r)
	}
	return runs
}

// each calls fn(i, first, n) for the shards of run r in turn: shard i's
// points first to first+n-1 are r's.
func (r pointRun) each(shards []Shard, perWeight int, fn func(i, first, n int)) {
	left, first := r.points, r.first
	for i := r.from; i < r.to && left > 0; i++ {
		n := min(shards[i].Weight*perWeight-first, left)
		fn(i, first, n)
		left -= n
		first = 0
	}
}

// forEachShard calls fill(i, first, pos, buf) for runs of the points of
// every shard i, which are perWeight*Weight points each, shard after shard
// in list order in pts.pos: pos is the part of shard i's range that holds
// its points first, first+1, ..., and buf a buffer for fill's own use,
// shared by the calls of one goroutine. It first sets the owners of that
// part. Large rings are filled by several goroutines, one per pointRun,
// so that a shard larger than the others (or the only one) is shared
// among them too; every point is written by exactly one call, and a
// point's position depends only on its shard and number, so the result
// does not depend on how the work was shared.
func forEachShard(shards []Shard, perWeight int, pts ringPoints, fill func(i, first int, pos []uint64, buf *[]byte)) {
	runs := pointRuns(shards, perWeight, len(pts.pos))
	parallel(len(runs), func(w int) {
		at := runs[w].at
		var buf []byte
		runs[w].each(shards, perWeight, func(i, first, n int) {
			own := pts.own[at : at+n]
			for j := range own {
				own[j] = int32(i)
			}
			fill(i, first, pts.pos[at:at+n], &buf)
			at += n
		})
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

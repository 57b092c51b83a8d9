package ring

import (
	"runtime"
	"sync"
)

// parallelPoints is the number of points from which a ring's build is
// shared among goroutines; below it, starting them costs more than it
// saves.
const parallelPoints = 1 << 16

// forEachShard calls fill(i, pos) for every shard i, where pos is the
// shard's range of pts.pos: perWeight*Weight points, shard after shard in
// list order. It first sets the owners of every range. Large rings are
// filled by up to GOMAXPROCS goroutines, each given a run of shards with
// about the same number of points; every range is written by exactly one
// call, so the result does not depend on how the work was shared.
func forEachShard(shards []Shard, perWeight int, pts ringPoints, fill func(i int, pos []uint64)) {
	run := func(from, to, at int) {
		for i := from; i < to; i++ {
			n := shards[i].Weight * perWeight
			own := pts.own[at : at+n]
			for j := range own {
				own[j] = int32(i)
			}
			fill(i, pts.pos[at:at+n])
			at += n
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(shards), len(pts.pos)/parallelPoints*2)
	if workers <= 1 {
		run(0, len(shards), 0)
		return
	}
	var wg sync.WaitGroup
	from, at, share := 0, 0, (len(pts.pos)+workers-1)/workers
	for w := 0; w < workers && from < len(shards); w++ {
		to, end := from, at
		for to < len(shards) && (end-at < share || w == workers-1) {
			end += shards[to].Weight * perWeight
			to++
		}
		f, t, a := from, to, at
		wg.Go(func() { run(f, t, a) })
		from, at = to, end
	}
	wg.Wait()
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

package pool

// The small bulk strings of one array reply (the values of an MGET, the
// fields of an HGETALL) are cut from a few shared allocations instead of
// one each: an MGET of 100 short values costs one allocation for them
// instead of 100; so are those of the replies of one pipeline read from
// one connection (replyReader.batchArena). Each value is capped at its own
// length, so appending to it copies and never reaches into its neighbour.
// A value kept after the others are dropped keeps its chunk (at most
// arenaChunkMax bytes, values of that same reply or pipeline only) from
// the garbage collector; values over
// arenaValueMax bytes get allocations of their own, so a large value
// never pins nor is pinned.
const (
	arenaValueMax = 256
	arenaChunkMax = 4 << 10
)

// arena hands out the bulk strings of one array reply, nested arrays
// included.
type arena struct {
	chunk []byte   // the free rest of the current chunk
	boxes [][]byte // the free rest of the current header slice (arena_box.go)
	left  int      // elements of the array being read not yet read, this one included
}

// take returns a slice of length n for a bulk string: cut from the
// arena's chunk when it is small, else allocated.
func (ar *arena) take(n int) []byte {
	if ar == nil || n > arenaValueMax || n == 0 {
		return make([]byte, n)
	}
	if len(ar.chunk) < n {
		// Room for the rest of the array if its values are this size,
		// within bounds.
		ar.chunk = make([]byte, max(min(n*min(ar.left, arenaChunkMax), arenaChunkMax), 64, n))
		ar.boxes = nil // a header slice serves one chunk (arena_box.go)
	}
	p := ar.chunk[:n:n]
	ar.chunk = ar.chunk[n:]
	return p
}

package pool

import "unsafe"

// The replies a connection returns are values of type any, and a []byte
// put into an any needs a slice header of its own on the heap: one more
// allocation per bulk string. The bulk strings cut from an arena's chunk
// (arena.go) get their headers from a shared slice of headers as well, so
// that a pipeline of 100 GETs or an MGET of 100 keys allocates a few
// header slices instead of 100 headers. A header slice serves the values
// of one chunk only, so a value kept alive keeps what it did before (its
// chunk) and a few headers more, never another chunk. A header is written
// once, before the any that refers to it exists, and never again.

// arenaBoxMax is the most headers one header slice holds (24 bytes each).
const arenaBoxMax = 128

// eface is the layout of an empty interface value: its dynamic type and a
// pointer to its data (for a slice, to the slice's header).
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

// bytesType is the dynamic type word of a []byte held in an any.
var bytesType = func() unsafe.Pointer {
	var v any = []byte(nil)
	return (*eface)(unsafe.Pointer(&v)).typ
}()

// box returns p as an any. A value cut from the arena's chunk shares a
// header slice with the arena's other values of the same chunk (take
// starts a new header slice with each chunk); any other value is boxed as
// the compiler boxes it.
func (ar *arena) box(p []byte) any {
	if ar == nil || len(p) == 0 || len(p) > arenaValueMax {
		return p
	}
	if len(ar.boxes) == 0 {
		// Enough for this value and the rest of its chunk at this size.
		ar.boxes = make([][]byte, max(min(ar.left, arenaBoxMax, 1+len(ar.chunk)/len(p)), 1))
	}
	h := &ar.boxes[0]
	*h = p
	ar.boxes = ar.boxes[1:]
	var v any
	e := (*eface)(unsafe.Pointer(&v))
	e.typ, e.data = bytesType, unsafe.Pointer(h)
	return v
}

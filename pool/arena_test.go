package pool

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mgetReply encodes an array of n bulk strings of size bytes each, the
// i-th made of the letter 'a'+i%26, then one larger value of big bytes
// when big > 0.
func mgetReply(n, size, big int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "*%d\r\n", n+min(big, 1))
	for i := range n {
		fmt.Fprintf(&sb, "$%d\r\n%s\r\n", size, strings.Repeat(string(rune('a'+i%26)), size))
	}
	if big > 0 {
		fmt.Fprintf(&sb, "$%d\r\n%s\r\n", big, strings.Repeat("Z", big))
	}
	return sb.String()
}

// The values of one array reply share allocations but not bytes: each is
// capped at its own length, so that appending to one, or writing into it,
// leaves its neighbours as they were.
func TestArrayValuesAreIndependent(t *testing.T) {
	tests := []struct {
		name           string
		n, size, big   int
		wantLen, chunk int
	}{
		{"16-byte values", 100, 16, 0, 100, 0},
		{"one-byte values, read a byte at a time", 40, 1, 0, 40, 1},
		{"values at the size limit", 30, arenaValueMax, 0, 30, 0},
		{"values over the size limit", 5, arenaValueMax + 1, 0, 5, 7},
		{"small values then a large one", 50, 8, 100_000, 51, 0},
		{"more small values than one chunk holds", 600, 16, 0, 600, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := mgetReply(tt.n, tt.size, tt.big)
			lc := newLiveConn(&coarseConn{Conn: &scriptedConn{in: []byte(in), chunk: tt.chunk}}, 0)
			r, err := lc.rd.reply(0, nil)
			require.NoError(t, err)
			vals, ok := r.([]any)
			require.True(t, ok, "%T", r)
			require.Len(t, vals, tt.wantLen)
			bs := make([][]byte, len(vals))
			for i, v := range vals {
				b, ok := v.([]byte)
				require.True(t, ok, "value %d: %T", i, v)
				require.Equal(t, len(b), cap(b), "value %d is capped at its length", i)
				bs[i] = b
			}
			for i, b := range bs {
				_ = append(b, '!', '!')
				for j := range b {
					b[j] = '#'
				}
				if i+1 < len(bs) {
					next := bs[i+1]
					want := byte('a' + (i+1)%26)
					if i+1 == tt.n {
						want = 'Z'
					}
					require.Equal(t, bytes.Repeat([]byte{want}, len(next)), next, "value %d after writing into value %d", i+1, i)
				}
			}
		})
	}
}

// An array of small values costs one allocation for all their bytes
// instead of one per value (the interface that holds each value still
// costs one).
func TestArrayValuesAllocations(t *testing.T) {
	const n, runs = 100, 50
	one := mgetReply(n, 16, 0)
	in := strings.Repeat(one, runs+2) // AllocsPerRun runs once more to warm up
	lc := newLiveConn(&coarseConn{Conn: &scriptedConn{in: []byte(in)}}, 0)
	allocs := testing.AllocsPerRun(runs, func() {
		if _, err := lc.rd.reply(0, nil); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("%.1f allocations for an array of %d 16-byte values", allocs, n)
	// The array, the chunk, one interface per value; a value per
	// allocation would be 2n+1.
	assert.LessOrEqual(t, allocs, float64(n+5))
}

package pool

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// getReplies encodes n bulk string replies of size bytes each, the i-th
// made of the letter 'a'+i%26, as n pipelined GETs are answered.
func getReplies(n, size int) string {
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, "$%d\r\n%s\r\n", size, strings.Repeat(string(rune('a'+i%26)), size))
	}
	return sb.String()
}

// sendGets queues n GETs on lc, as a pipeline does before it reads.
func sendGets(t testing.TB, lc *liveConn, n int) {
	for i := range n {
		if err := lc.Send("GET", i); err != nil {
			t.Fatal(err)
		}
	}
	if err := lc.Flush(); err != nil {
		t.Fatal(err)
	}
}

// The values of a pipeline's replies share allocations but not bytes,
// and the connection keeps no chunk once the last reply is read.
func TestPipelineValuesAreIndependent(t *testing.T) {
	tests := []struct {
		name    string
		n, size int
		chunk   int
	}{
		{"16-byte values", 100, 16, 0},
		{"one-byte values, read a byte at a time", 40, 1, 1},
		{"values at the size limit", 30, arenaValueMax, 0},
		{"values over the size limit", 5, arenaValueMax + 1, 7},
		{"more small values than one chunk holds", 600, 16, 0},
		{"a single reply", 1, 16, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lc := newLiveConn(&coarseConn{Conn: &scriptedConn{in: []byte(getReplies(tt.n, tt.size)), chunk: tt.chunk}}, 0)
			sendGets(t, lc, tt.n)
			bs := make([][]byte, tt.n)
			for i := range bs {
				r, err := lc.Receive()
				require.NoError(t, err, "reply %d", i)
				b, ok := r.([]byte)
				require.True(t, ok, "reply %d: %T", i, r)
				require.Len(t, b, tt.size, "reply %d", i)
				require.Equal(t, len(b), cap(b), "reply %d is capped at its length", i)
				bs[i] = b
			}
			assert.Nil(t, lc.rd.batch.chunk, "an idle connection keeps no chunk")
			assert.Nil(t, lc.rd.batch.boxes, "an idle connection keeps no header slice")
			for i, b := range bs {
				_ = append(b, '!', '!')
				for j := range b {
					b[j] = '#'
				}
				if i+1 < len(bs) {
					want := byte('a' + (i+1)%26)
					require.Equal(t, bytes.Repeat([]byte{want}, tt.size), bs[i+1], "reply %d after writing into reply %d", i+1, i)
				}
			}
		})
	}
}

// A pipeline of 100 GETs of 16-byte values costs a few allocations for
// the values and their interface headers together, not one or two per
// reply.
func TestPipelineValuesAllocations(t *testing.T) {
	const n, runs = 100, 50
	lc := newLiveConn(&coarseConn{Conn: &scriptedConn{in: []byte(strings.Repeat(getReplies(n, 16), runs+2))}}, 0)
	keys := make([]any, n)
	for i := range keys {
		keys[i] = fmt.Sprint(i)
	}
	allocs := testing.AllocsPerRun(runs, func() {
		for _, k := range keys {
			if err := lc.Send("GET", k); err != nil {
				t.Fatal(err)
			}
		}
		if err := lc.Flush(); err != nil {
			t.Fatal(err)
		}
		for range n {
			if _, err := lc.Receive(); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Logf("%.1f allocations for a pipeline of %d GETs of 16-byte values", allocs, n)
	assert.LessOrEqual(t, allocs, 10.0)
}

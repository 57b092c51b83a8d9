package pool

import (
	"bytes"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The values of a pipeline and of an array reply share header slices:
// each still reads as a []byte of its own, by type switch, assertion and
// comparison, and stays intact after the connection, the other values and
// the header slice's other users are gone and the collector has run.
func TestBoxedValuesSurviveCollection(t *testing.T) {
	const n = 300
	kept := make([]any, 0, 2*n/7+2)
	func() {
		lc := newLiveConn(&coarseConn{Conn: &scriptedConn{in: []byte(getReplies(n, 16) + "*3\r\n$2\r\nxy\r\n:5\r\n$3\r\nabc\r\n")}}, 0)
		sendGets(t, lc, n+1)
		for i := range n {
			r, err := lc.Receive()
			require.NoError(t, err, "reply %d", i)
			if i%7 == 0 {
				kept = append(kept, r)
			}
		}
		r, err := lc.Receive()
		require.NoError(t, err)
		arr, ok := r.([]any)
		require.True(t, ok, "%T", r)
		require.Len(t, arr, 3)
		kept = append(kept, arr[0], arr[2])
	}()
	for range 3 {
		runtime.GC()
		_ = make([][]byte, 1<<16) // reuse of freed memory would show
	}
	require.Len(t, kept, (n+6)/7+2)
	for j, v := range kept[:len(kept)-2] {
		i := j * 7
		want := bytes.Repeat([]byte{byte('a' + i%26)}, 16)
		switch b := v.(type) {
		case []byte:
			require.Equal(t, want, b, "reply %d", i)
			require.Equal(t, 16, cap(b), "reply %d", i)
		default:
			t.Fatalf("reply %d: %T", i, v)
		}
	}
	require.Equal(t, []byte("xy"), kept[len(kept)-2])
	require.Equal(t, "abc", string(kept[len(kept)-1].([]byte)))
	require.Equal(t, strings.Repeat("a", 16), string(kept[0].([]byte)))
}

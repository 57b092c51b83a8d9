package reshard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/stretchr/testify/require"
)

// TestReview14ScannedCountsEachKeyOnce: Report.Scanned counts the keys
// looked at on the old nodes (and Progress.Scanned, against DBSIZE, the
// share of the work done). SCAN returns a key again when the node's table
// shrinks between two of its calls (the keys of the buckets that fold
// into the one it goes on from), which an old node whose keys mostly
// leave does mid-scan: here 66,000 of its 66,500 keys move, its table
// shrinks twice (at 10% full; a server cron of 100 Hz does so at once),
// and the keys of the page read just before were counted again, a few
// each time (66,507 scanned of 66,500).
func TestReview14ScannedCountsEachKeyOnce(t *testing.T) {
	const moving, strays = 66000, 500
	servers := redistest.StartNTB(t, 3, redistest.Options{Args: []string{"--hz", "100"}})
	from := mustParse(t, ringURL([]*redistest.Server{servers[0], servers[2]}, []string{"s0", "s2"}, nil))
	to := mustParse(t, ringURL(servers[1:2], []string{"s1"}, nil))
	router := newClient(t, from)
	conn, err := redis.Dial("tcp", servers[0].Addr)
	require.NoError(t, err)
	defer conn.Close()
	// A few rounds: whether the table shrinks between the very two SCAN
	// calls that return a key twice depends on the server's timing.
	for round := range 3 {
		var nm, ns int
		for i := 0; nm < moving || ns < strays; i++ {
			k := fmt.Sprintf("dup%d:%d", round, i)
			n, err := router.Router().Route(k)
			require.NoError(t, err)
			switch {
			case n.Addr == servers[0].Addr && nm < moving:
				nm++
			case n.Addr == servers[2].Addr && ns < strays:
				ns++ // on s0, where neither topology places it
			default:
				continue
			}
			require.NoError(t, conn.Send("SET", k, i))
		}
		require.NoError(t, conn.Flush())
		for range moving + strays {
			_, err := conn.Receive()
			require.NoError(t, err)
		}
		rep, err := reshard.Move(context.Background(), reshard.Options{From: from, To: to, SkipClientCheck: true, SkipVerify: true})
		require.NoError(t, err)
		t.Logf("round %d: scanned %d, moved %d, strays %d", round, rep.Scanned, rep.Moved, rep.Strays)
		require.EqualValues(t, moving, rep.Moved, "round %d: keys moved", round)
		// The strays of the earlier rounds are still there.
		require.EqualValues(t, (round+1)*strays, rep.Strays, "round %d: strays", round)
		require.EqualValues(t, moving+(round+1)*strays, rep.Scanned, "round %d: keys scanned", round)
	}
}

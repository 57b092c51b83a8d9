package reshard_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/reshard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview12RerunRecognisesItsOwnCopies: a DUMP/RESTORE move that fails
// after its RESTOREs and before its deletes (here the old node refuses
// the scripts of the deletes) leaves each key at both nodes, the new
// node's copy the very value the mover restored. The next run must end
// with every key once, at its new owner, with its value, nothing left
// at the old node, a clean verification, and count those keys as moved,
// not as keys the new owner already had (Busy): no client wrote them
// there. Its MIGRATE meets BUSYKEY for each, as its DUMP/RESTORE path
// meets a key already restored (SAME).
func TestReview12RerunRecognisesItsOwnCopies(t *testing.T) {
	for _, dump := range []bool{false, true} {
		t.Run(fmt.Sprintf("dump=%v", dump), func(t *testing.T) {
			const n = 30
			ctx := context.Background()
			servers, from, to := moveAll(t)
			fill(t, from, "rc", n)
			_, err := servers[0].Do("ACL", "SETUSER", "default", "-evalsha", "-eval")
			require.NoError(t, err)
			first, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true,
				Dump: true, Batch: n, MaxBlock: time.Minute, Timeout: 2 * time.Second})
			require.Error(t, err, "the first run, whose deletes the old node refuses")
			t.Logf("the first run: %v", err)
			require.NotNil(t, first)

			oldConn := newRawConn(t, servers[0])
			newConn := newRawConn(t, servers[1])
			both := 0
			for i := range n {
				k := fmt.Sprintf("rc:%d", i)
				o, err := redis.Int(oldConn.Do("EXISTS", k))
				require.NoError(t, err)
				w, err := redis.Int(newConn.Do("EXISTS", k))
				require.NoError(t, err)
				both += o * w
			}
			require.Equal(t, n, both, "keys at both nodes after the first run")

			_, err = servers[0].Do("ACL", "SETUSER", "default", "+@all")
			require.NoError(t, err)
			second, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true,
				Dump: dump, Batch: n, MaxBlock: time.Minute, Timeout: 2 * time.Second})
			require.NoError(t, err, "the second run")
			require.NotNil(t, second)

			for i := range n {
				k := fmt.Sprintf("rc:%d", i)
				v, err := redis.String(newConn.Do("GET", k))
				require.NoError(t, err, "%s at the new node", k)
				assert.Equal(t, strconv.Itoa(i), v, k)
				o, err := redis.Int(oldConn.Do("EXISTS", k))
				require.NoError(t, err)
				assert.Zero(t, o, "%s left at the old node", k)
			}
			size, err := redis.Int(newConn.Do("DBSIZE"))
			require.NoError(t, err)
			assert.Equal(t, n, size, "keys at the new node")
			v, err := reshard.Verify(ctx, to, reshard.VerifyOptions{Nodes: []string{servers[0].Addr}})
			require.NoError(t, err)
			assert.Zero(t, v.Misplaced, "misplaced: %v", v.Samples)
			assert.EqualValues(t, n, v.Scanned, "keys verified")

			assert.EqualValues(t, n, first.Moved+second.Moved, "Moved, both runs")
			assert.EqualValues(t, 0, first.Busy+second.Busy, "Busy, both runs")
			var flowKeys int64
			for _, f := range second.Flows {
				flowKeys += f.Keys
			}
			assert.EqualValues(t, second.Moved, flowKeys, "the second run's flows")
		})
	}
}

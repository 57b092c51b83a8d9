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

// TestReview12BusyKeyLoopIOErrorFallsBackToDumpRestore: a batch whose
// MIGRATE answers BUSYKEY is settled key by key, each key with a MIGRATE
// of its own. When one of those fails with IOERR (here the new node's
// answer to the second busy key's RESTORE never comes back, and the old
// node's MIGRATE times out), the key is still at the old node, perhaps at
// the new one too: DUMP/RESTORE through the mover settles it, as it does
// after an IOERR of a whole batch. The Move then ends without an error,
// every key once at the new node, the new node's copies of the busy keys
// kept, and the busy keys counted as busy, the others as moved.
func TestReview12BusyKeyLoopIOErrorFallsBackToDumpRestore(t *testing.T) {
	const n = 20
	servers, from, to := moveAll(t)
	fill(t, from, "bl", n)
	newConn, err := redis.Dial("tcp", servers[1].Addr)
	require.NoError(t, err)
	defer newConn.Close()
	var busyKeys []int
	for i := 0; i < n; i += 7 {
		_, err := newConn.Do("SET", fmt.Sprintf("bl:%d", i), "new")
		require.NoError(t, err)
		busyKeys = append(busyKeys, i)
	}
	require.Len(t, busyKeys, 3)
	// SELECT's +OK and the batch's n answers; then the first busy key's
	// own MIGRATE (SELECT again, the target having answered an error, and
	// its BUSYKEY); then the second's SELECT, and its RESTORE's answer is
	// held back.
	proxy := startReplyProxy(t, servers[1].Addr, 1+n+2+1, replyStall, nil)
	// The proxy's fault is for the mover's MIGRATE, not the arming's probe.
	rep, err := reshard.Move(context.Background(), reshard.Options{From: from, To: to, SkipClientCheck: true,
		Addrs: map[string]string{servers[1].Addr: proxy.addr}, SkipProbe: true, Batch: n, MaxBlock: time.Minute,
		Timeout: time.Second, Finish: true})
	require.True(t, proxy.broke.Load(), "the proxy held back an answer")
	require.Equal(t, 1, errorCount(t, servers[0], "IOERR"), "one key's MIGRATE failed with IOERR")
	require.NoError(t, err, "the Move, once a key's MIGRATE failed with IOERR")
	require.NotNil(t, rep)

	oldConn, err := redis.Dial("tcp", servers[0].Addr)
	require.NoError(t, err)
	defer oldConn.Close()
	oldSize, err := redis.Int(oldConn.Do("DBSIZE"))
	require.NoError(t, err)
	assert.Equal(t, 0, oldSize, "keys left at the old node")
	size, err := redis.Int(newConn.Do("DBSIZE"))
	require.NoError(t, err)
	assert.Equal(t, n, size, "keys at the new node")
	for i := range n {
		v, err := redis.String(newConn.Do("GET", fmt.Sprintf("bl:%d", i)))
		require.NoError(t, err, "bl:%d at the new node", i)
		want := strconv.Itoa(i)
		if i%7 == 0 {
			want = "new"
		}
		assert.Equal(t, want, v, "bl:%d", i)
	}
	assert.EqualValues(t, n-len(busyKeys), rep.Moved, "Moved")
	assert.EqualValues(t, len(busyKeys), rep.Busy, "Busy")
	require.NotNil(t, rep.Verify)
	assert.Zero(t, rep.Verify.Misplaced, "misplaced: %v", rep.Verify.Samples)
}

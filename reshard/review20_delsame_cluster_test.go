package reshard_test

import (
	"context"
	"sync"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
)

// TestReview20DumpMoveDeletesAnOldCopyReEncodedByASlotMove: with
// DUMP/RESTORE (Options.Dump), the slot of a hash moves inside the old
// cluster once the hash is restored in the ring, before its old copy is
// deleted, to a master with a lower hash-max-listpack-entries: its
// RESTORE there re-encodes the hash, whose DUMP payload then differs
// from the one the mover restored. The old copy, unchanged, was left
// there, the hash in both topologies and the move failed its
// verification; it is now deleted.
func TestReview20DumpMoveDeletesAnOldCopyReEncodedByASlotMove(t *testing.T) {
	r := newFallbackRig(t)
	const h = "fb:{tag}:hash"
	_, err := newRawConn(t, r.owner).Do("HSET", h, "a", "1", "b", "2")
	require.NoError(t, err)
	_, err = newRawConn(t, r.other).Do("CONFIG", "SET", "hash-max-listpack-entries", "1")
	require.NoError(t, err)
	other := newRawConn(t, r.other)
	var once sync.Once
	var hookErr error
	var encoding string
	reshard.SetTestHookDelete(func(n shard.Node, keys []string) {
		if n.Addr == r.owner.Addr && hasTagKey(keys) {
			once.Do(func() {
				if hookErr = r.moveSlot(); hookErr == nil {
					encoding, hookErr = redis.String(other.Do("OBJECT", "ENCODING", h))
				}
			})
		}
	})
	defer reshard.SetTestHookDelete(nil)
	rep, err := reshard.Move(context.Background(), reshard.Options{From: r.from, To: r.to, SkipClientCheck: true, ScanCount: 1000, Dump: true})
	require.NoError(t, hookErr)
	require.EqualValues(t, 1, callsDone(&once), "the slot moved during the move")
	require.Equal(t, "hashtable", encoding, "precondition: the slot's move re-encoded the hash")
	require.NoError(t, err, "the old copy of a hash re-encoded by its slot's move")
	require.NotNil(t, rep.Verify)
	assert.Zero(t, rep.Verify.Misplaced)
	assert.EqualValues(t, len(r.keys)+1, rep.Moved)
	for _, s := range r.old.Masters() {
		ks, err := redis.Strings(newRawConn(t, s).Do("KEYS", h)) // EXISTS answers MOVED where the slot is not served
		require.NoError(t, err)
		assert.Empty(t, ks, "%s left on old master %s", h, s.Addr)
	}
	var at []string
	for _, s := range r.servers {
		v, err := redis.StringMap(newRawConn(t, s).Do("HGETALL", h))
		require.NoError(t, err)
		if len(v) > 0 {
			at = append(at, s.Addr)
			assert.Equal(t, map[string]string{"a": "1", "b": "2"}, v)
		}
	}
	assert.Len(t, at, 1, "%s on exactly one ring server", h)
}

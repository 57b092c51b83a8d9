package shard_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
)

// TestReview18AloneGetOfAnEmptyString: a GET sent alone to a key's old
// owner takes a nil reply for the key missing. A key holding the empty
// string answers an empty bulk string, which must not decode as nil (on a
// single Do, or in a pipeline whose replies share an arena): it is the
// answer, and the key stays where it is.
func TestReview18AloneGetOfAnEmptyString(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	byAddr := serversByAddr(servers)
	keys := movingKeys(t, from, to, "empty:", 3)
	for _, k := range keys {
		_, err := byAddr[ringOwner(t, from, k)].Do("SET", k, "")
		require.NoError(t, err)
		// A copy at the new owner that a read must not reach: the old
		// owner's copy is the key while it is there.
		_, err = byAddr[ringOwner(t, to, k)].Do("SET", k, "elsewhere")
		require.NoError(t, err)
	}
	c := newClient(t, armedConfig(from, to))

	got, err := c.Do(ctx, "GET", keys[0])
	require.NoError(t, err)
	assert.Equal(t, []byte{}, got, "GET alone")

	p := c.Pipeline()
	p.Send("GET", keys[1])
	p.Send("GET", keys[2])
	p.Send("GET", keys[1])
	res, err := p.Exec(ctx)
	require.NoError(t, err)
	require.Len(t, res, 3)
	for i, r := range res {
		require.NoError(t, r.Err, "reply %d", i)
		assert.Equal(t, []byte{}, r.Reply, "reply %d in a pipeline", i)
	}
	for _, k := range keys {
		n, err := byAddr[ringOwner(t, from, k)].Do("EXISTS", k)
		require.NoError(t, err)
		assert.Equal(t, "1", n, "%s left its old owner", k)
	}
}

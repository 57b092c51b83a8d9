package reshard_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview9MoveOfAValueTheNewNodeRefuses: a value larger than the new
// node's proto-max-bulk-len cannot be restored there: the new node closes
// the connection while the RESTOREs are being sent. The move failed with
// nothing but "write: connection reset by peer" from the new node, which
// said neither which key nor why; the error names the limits that refuse
// it and, when the mover sent the RESTOREs itself, the batch's largest
// value and its size.
func TestReview9MoveOfAValueTheNewNodeRefuses(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	_, err := servers[1].Do("CONFIG", "SET", "proto-max-bulk-len", "1mb")
	require.NoError(t, err)
	from := mustParse(t, ringURL(servers[:1], []string{"s0"}, nil))
	to := mustParse(t, ringURL(servers[1:], []string{"s1"}, nil))
	big := make([]byte, 3<<20) // random: DUMP's compression keeps it over 1 MB
	_, err = rand.Read(big)
	require.NoError(t, err)
	_, err = servers[0].Do("SET", "big value", string(big))
	require.NoError(t, err)
	for i := range 5 {
		_, err := servers[0].Do("SET", fmt.Sprint("small:", i), "v")
		require.NoError(t, err)
	}
	for _, dump := range []bool{false, true} {
		t.Run(fmt.Sprintf("dump=%v", dump), func(t *testing.T) {
			_, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true, Dump: dump,
				Timeout: time.Second})
			require.Error(t, err)
			var ne *shard.NodeError
			require.ErrorAs(t, err, &ne)
			assert.Contains(t, err.Error(), "s1", "names the new node")
			assert.Contains(t, err.Error(), "proto-max-bulk-len")
			if ne.Node.Addr == servers[1].Addr { // RESTOREs sent by the mover: it knows the largest value
				assert.Contains(t, err.Error(), `"big value"`)
				assert.Contains(t, err.Error(), "bytes")
			}
			n, err := servers[0].Do("EXISTS", "big value")
			require.NoError(t, err)
			assert.Equal(t, "1", n, "the value stays at its old owner")
		})
	}
}

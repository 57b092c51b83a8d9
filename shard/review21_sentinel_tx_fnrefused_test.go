package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// On a Sentinel shard with FailoverWait, a transaction whose function
// returns the READONLY with which a master demoted behind the Sentinels'
// back refused a write of fn's sent through Tx.Do ran nothing: the write
// was refused before it ran, and nothing of MULTI ... EXEC was sent. It
// runs again at the new master, as it does in cluster mode and as a
// transaction whose EXEC met the READONLY does.
func TestReview21SentinelTxFnReturningReadOnlyRunsAgain(t *testing.T) {
	set, cfg := loneSentinel(t)
	cfg.Sentinel.FailoverWait = 20 * time.Second
	c := newClient(t, cfg)
	ctx := context.Background()
	const key = "r21sro"
	_, err := c.Do(ctx, "SET", key, "0")
	require.NoError(t, err)
	_, next := unseenFailover(t, set)

	attempts := 0
	_, err = c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
		attempts++
		if _, err := tx.Do("INCR", key+":n"); err != nil {
			return err
		}
		return tx.Queue("SET", key, "done")
	})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, attempts, 2)
	for k, want := range map[string]string{key + ":n": "1", key: "done"} {
		v, err := next.Do("GET", k)
		require.NoError(t, err)
		assert.Equal(t, want, v, "GET %s at the new master", k)
	}
}

package shard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// During a migration, every key a transaction touches is moved to its new
// owner before the transaction's command on it runs there, not only the
// keys given to Client.Tx: otherwise an INCRBY between MULTI and EXEC
// starts from nothing at the new owner while the value sits at the old one.
func TestMigrationMovesEveryKeyOfATransaction(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers), ringConfig(servers[:3]) // shrink: keys move from servers[3] to the others
	cfg := to
	cfg.Migration = &shard.Migration{From: &from, Armed: true}
	c := newClient(t, cfg)

	fromRing, err := ring.New(from.RingConfig())
	require.NoError(t, err)
	toRing, err := ring.New(to.RingConfig())
	require.NoError(t, err)
	owner := func(r *ring.Ring, k string) string { return r.Shards()[r.Locate(k)].Addr }
	// movingKey returns a key (with prefix p) whose owner changes to one of
	// the old servers, and a key on that server whose owner does not.
	movingKey := func(p string) (moving, staying string) {
		for i := 0; moving == "" || staying == ""; i++ {
			require.Less(t, i, 10000, "no key found")
			k := fmt.Sprintf("%s:%d", p, i)
			switch o := owner(toRing, k); {
			case moving == "" && o != servers[3].Addr && owner(fromRing, k) != o:
				moving = k
			case moving != "" && owner(fromRing, k) == o && o == owner(toRing, moving):
				staying = k
			}
		}
		return moving, staying
	}
	cases := []struct {
		name string
		// run adds 5 to moving in a transaction and returns the reply of
		// the transaction's INCRBY.
		run func(t *testing.T, moving, staying string) any
	}{
		{"Tx queues a key it does not watch", func(t *testing.T, moving, staying string) any {
			res, err := c.Tx(ctx, []string{staying}, func(tx *shard.Tx) error {
				return tx.Queue("INCRBY", moving, 5)
			})
			require.NoError(t, err)
			require.Len(t, res, 1)
			return res[0]
		}},
		{"Tx reads a key it does not watch", func(t *testing.T, moving, staying string) any {
			res, err := c.Tx(ctx, []string{staying}, func(tx *shard.Tx) error {
				v, err := redis.Int(tx.Do("GET", moving))
				if err != nil {
					return err
				}
				return tx.Queue("SET", moving, v+5)
			})
			require.NoError(t, err)
			require.Len(t, res, 1)
			v, err := c.Do(ctx, "GET", moving)
			require.NoError(t, err)
			return v
		}},
		{"Conn WATCH MULTI EXEC", func(t *testing.T, moving, _ string) any {
			conn := c.Conn()
			defer conn.Close()
			require.NoError(t, conn.Send("WATCH", moving))
			require.NoError(t, conn.Send("MULTI"))
			require.NoError(t, conn.Send("INCRBY", moving, 5))
			res, err := redis.Values(conn.Do("EXEC"))
			require.NoError(t, err)
			require.Len(t, res, 1)
			return res[0]
		}},
		{"Conn MULTI EXEC one Do at a time", func(t *testing.T, moving, staying string) any {
			conn := c.Conn()
			defer conn.Close()
			_, err := conn.Do("MULTI")
			require.NoError(t, err)
			_, err = conn.Do("SET", staying, "x")
			require.NoError(t, err)
			_, err = conn.Do("INCRBY", moving, 5)
			require.NoError(t, err)
			res, err := redis.Values(conn.Do("EXEC"))
			require.NoError(t, err)
			require.Len(t, res, 2)
			return res[1]
		}},
	}
	for ci, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			moving, staying := movingKey(fmt.Sprint("txmig", ci))
			old := newClient(t, from)
			_, err := old.Do(ctx, "SET", moving, 10)
			require.NoError(t, err)
			require.Equal(t, []string{ringOwner(t, from, moving)}, holders(t, servers, moving))

			got, err := redis.Int(tc.run(t, moving, staying), nil)
			require.NoError(t, err)
			assert.Equal(t, 15, got, "the transaction saw the moved value")
			assert.Equal(t, []string{ringOwner(t, to, moving)}, holders(t, servers, moving), "the key sits at its new owner only")
			v, err := redis.Int(c.Do(ctx, "GET", moving))
			require.NoError(t, err)
			assert.Equal(t, 15, v)
		})
	}
}

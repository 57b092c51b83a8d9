package reshard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/reshard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview13IdenticalValueWithAnotherTTLIsAClientsWrite: a copy at the
// new owner whose value is the old copy's (equal DUMPs) but whose expiry
// is not (none, or a far later one) is no copy the mover left (its copies
// carry the old copy's TTL, as MIGRATE's do): a client wrote it, a newer
// write. It must be kept with its own expiry, the old copy deleted, and
// the key counted as one the new owner already had (Busy), not as moved.
// A copy with the old copy's value and TTL (what a failed earlier move
// left) is counted as moved and keeps that TTL. DUMP carries no TTL, so a
// comparison of DUMPs alone counted all three as moved.
func TestReview13IdenticalValueWithAnotherTTLIsAClientsWrite(t *testing.T) {
	const oldTTL = 100_000 // ms
	cases := []struct {
		name string
		// newTTL is the new owner's copy's PX (0: none; -1: the old
		// copy's, as restored by an earlier move).
		newTTL    int64
		wantBusy  int64
		wantMoved int64
	}{
		{"persistent at the new owner", 0, 1, 0},
		{"a later expiry at the new owner", 3_000_000, 1, 0},
		{"the old copy's expiry at the new owner", -1, 0, 1},
	}
	for _, dump := range []bool{false, true} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("dump=%v/%s", dump, tc.name), func(t *testing.T) {
				ctx := context.Background()
				servers, from, to := moveAll(t)
				oldConn := newRawConn(t, servers[0])
				newConn := newRawConn(t, servers[1])
				const k = "tc:key"
				_, err := oldConn.Do("SET", k, "hello", "PX", oldTTL)
				require.NoError(t, err)
				switch {
				case tc.newTTL == 0:
					_, err = newConn.Do("SET", k, "hello")
				case tc.newTTL > 0:
					_, err = newConn.Do("SET", k, "hello", "PX", tc.newTTL)
				default:
					payload, derr := redis.Bytes(oldConn.Do("DUMP", k))
					require.NoError(t, derr)
					pttl, derr := redis.Int64(oldConn.Do("PTTL", k))
					require.NoError(t, derr)
					require.Positive(t, pttl)
					_, err = newConn.Do("RESTORE", k, pttl, payload)
				}
				require.NoError(t, err)
				a, err := redis.Bytes(oldConn.Do("DUMP", k))
				require.NoError(t, err)
				b, err := redis.Bytes(newConn.Do("DUMP", k))
				require.NoError(t, err)
				require.Equal(t, a, b, "the two copies' DUMPs")

				rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true,
					Dump: dump, Timeout: 2 * time.Second})
				require.NoError(t, err)
				require.NotNil(t, rep)

				o, err := redis.Int(oldConn.Do("EXISTS", k))
				require.NoError(t, err)
				assert.Zero(t, o, "the old copy left")
				v, err := redis.String(newConn.Do("GET", k))
				require.NoError(t, err)
				assert.Equal(t, "hello", v)
				pttl, err := redis.Int64(newConn.Do("PTTL", k))
				require.NoError(t, err)
				switch {
				case tc.newTTL == 0:
					assert.EqualValues(t, -1, pttl, "the client's write without expiry kept")
				case tc.newTTL > 0:
					assert.InDelta(t, tc.newTTL, pttl, 1000, "the client's expiry kept")
				default:
					assert.InDelta(t, oldTTL, pttl, 1000, "the old copy's expiry")
				}
				assert.Equal(t, tc.wantBusy, rep.Busy, "Busy")
				assert.Equal(t, tc.wantMoved, rep.Moved, "Moved")
			})
		}
	}
}

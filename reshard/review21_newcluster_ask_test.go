package reshard_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
)

// TestReview21MoverFollowsAnAskOfTheNewCluster: the mover moves a ring
// into a cluster one of whose slots is half moved inside it: IMPORTING at
// one master, MIGRATING at its owner, a key of the slot migrated already.
// The owner refuses the RESTORE of every ring key of the slot (it holds
// none) with ASK: a new key of such a slot belongs at the importing
// master, which takes it after ASKING. Every key must end in the cluster,
// once, with its value and expiry, the slot's keys at the importing
// master, and a cluster client find them all once the slot move ends.
func TestReview21MoverFollowsAnAskOfTheNewCluster(t *testing.T) {
	for _, tc := range []struct {
		name string
		dump bool
	}{{"migrate", false}, {"dump", true}} {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() {
				t.Skip("starts a cluster of its own")
			}
			ctx := context.Background()
			servers := redistest.StartNTB(t, 2, redistest.Options{})
			rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
			from := mustParse(t, ringURL(servers, []string{"s0", "s1"}, nil))
			to := mustParse(t, clusterURL(rc))
			src := newClient(t, from)
			var keys []string
			for i := range 30 {
				keys = append(keys, fmt.Sprintf("newask:{tag}:%d", i)) // one slot
			}
			for i := range 40 {
				keys = append(keys, fmt.Sprintf("newask:%d", i)) // spread
			}
			for _, k := range keys {
				_, err := src.Do(ctx, "SET", k, "v-"+k, "EX", 1000)
				require.NoError(t, err)
			}
			slot := cluster.Slot("newask:{tag}:0")
			owner, err := rc.MasterOfSlot(slot)
			require.NoError(t, err)
			other, err := rc.OtherMaster(owner)
			require.NoError(t, err)
			_, err = owner.Do("SET", "already:{tag}", "x")
			require.NoError(t, err)
			halfMoveSlot(t, slot, owner, other, "already:{tag}")

			rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true, ScanCount: 1000, Dump: tc.dump})
			require.NoError(t, err, "a slot of the new cluster half moved during the move")
			assert.EqualValues(t, len(keys), rep.Moved)
			assert.Zero(t, rep.Busy)
			assert.Zero(t, rep.Strays)

			all := append(append([]*redistest.Server{}, servers...), rc.Masters()...)
			for _, k := range keys {
				at := askingPlacesOf(t, all, k)
				if !assert.Len(t, at, 1, "%s in exactly one place", k) {
					continue
				}
				if cluster.Slot(k) == slot {
					assert.Equal(t, other.Addr, at[0], "%s at the importing master", k)
				}
			}

			// The slot move ends: every master names the importing one.
			otherID, err := other.Do("CLUSTER", "MYID")
			require.NoError(t, err)
			for _, s := range rc.Masters() {
				_, err := s.Do("CLUSTER", "SETSLOT", strconv.Itoa(slot), "NODE", otherID)
				require.NoError(t, err)
			}
			dst := newClient(t, to)
			for _, k := range keys {
				v, err := redis.String(dst.Do(ctx, "GET", k))
				require.NoError(t, err, k)
				assert.Equal(t, "v-"+k, v, k)
				ttl, err := redis.Int64(dst.Do(ctx, "PTTL", k))
				require.NoError(t, err, k)
				assert.True(t, ttl > 900_000 && ttl <= 1_000_000, "%s keeps its expiry: PTTL %d", k, ttl)
			}
		})
	}
}

// halfMoveSlot leaves slot half moved from owner to other, as an
// operator's move in progress does: IMPORTING on other, MIGRATING on
// owner, and keys (of the slot, at owner) MIGRATEd to other.
func halfMoveSlot(t *testing.T, slot int, owner, other *redistest.Server, keys ...string) {
	t.Helper()
	ownerID, err := owner.Do("CLUSTER", "MYID")
	require.NoError(t, err)
	otherID, err := other.Do("CLUSTER", "MYID")
	require.NoError(t, err)
	s := strconv.Itoa(slot)
	_, err = other.Do("CLUSTER", "SETSLOT", s, "IMPORTING", ownerID)
	require.NoError(t, err)
	_, err = owner.Do("CLUSTER", "SETSLOT", s, "MIGRATING", otherID)
	require.NoError(t, err)
	for _, k := range keys {
		v, err := owner.Do("MIGRATE", "127.0.0.1", strconv.Itoa(other.Port), "", "0", "5000", "KEYS", k)
		require.NoError(t, err)
		require.Equal(t, "OK", v)
	}
}

// askingPlacesOf returns the addresses of the servers that hold key,
// asked after ASKING (which a server out of cluster mode refuses): a
// master importing the key's slot counts too.
func askingPlacesOf(t *testing.T, servers []*redistest.Server, key string) []string {
	t.Helper()
	var out []string
	for _, s := range servers {
		conn := newRawConn(t, s)
		if _, err := conn.Do("ASKING"); err != nil {
			var re redis.Error
			require.ErrorAs(t, err, &re, "ASKING at %s", s.Addr)
		}
		if n, err := redis.Int(conn.Do("EXISTS", key)); err == nil && n == 1 {
			out = append(out, s.Addr)
		}
		conn.Close()
	}
	return out
}

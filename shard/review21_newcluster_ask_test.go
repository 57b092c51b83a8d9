package shard_test

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// TestReview21MigrationIntoAClusterFollowsAnAsk: a ring moving into a
// cluster one of whose slots is half moved inside it (IMPORTING at one
// master, MIGRATING at its owner, a key of the slot migrated already).
// The client's MIGRATE of a ring key of that slot reaches the slot's
// owner, which has not the key and refuses its RESTORE with ASK
// ("Target instance replied with error: ASK ..."). A cluster client
// writes a new key of such a slot at the importing master, after
// ASKING: so must the move. The command then runs on the key there,
// the key ends there alone, with the value the command left, and a
// later read finds it.
func TestReview21MigrationIntoAClusterFollowsAnAsk(t *testing.T) {
	ctx := oldClusterContext(t, 2*time.Minute)
	ringServers := redistest.StartNTB(t, 2, redistest.Options{})
	nc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	from, to := ringConfig(ringServers), clusterConfig(nc.Seeds()...)
	byAddr := serversByAddr(ringServers)
	c := newClient(t, armedConfig(from, to)) // reads the cluster's map now
	all := append(append([]*redistest.Server{}, ringServers...), nc.Masters()...)

	tests := []struct {
		cmd   []any // the command; its key is inserted second
		want  any
		value string // the key's value afterwards
		stays bool   // a read answered at the key's old owner, unmoved
	}{
		{[]any{"INCR"}, int64(42), "42", false},
		{[]any{"APPEND", "!"}, int64(3), "41!", false},
		{[]any{"GET"}, []byte("41"), "41", true},
		{[]any{"EXPIRE", "1000"}, int64(1), "41", false},
	}
	for i, tt := range tests {
		tag := "{ask" + strconv.Itoa(i) + "}"
		k, gone := "newask:"+tag, "already:"+tag
		owner, _ := ownerAndOther(t, nc, k)
		_, err := owner.Do("SET", gone, "x")
		require.NoError(t, err)
		_, err = byAddr[ringOwner(t, from, k)].Do("SET", k, "41")
		require.NoError(t, err)
		_, dst := halfMove(t, nc, k, gone)
		at := dst
		if tt.stays {
			at = byAddr[ringOwner(t, from, k)]
		}

		args := append([]any{k}, tt.cmd[1:]...)
		reply, err := c.Do(ctx, tt.cmd[0].(string), args...)
		require.NoError(t, err, "%v", tt.cmd)
		assert.Equal(t, tt.want, reply, "%v", tt.cmd)
		assert.Equal(t, []string{at.Addr}, askPlacesOf(t, all, k), "%v: the key's places", tt.cmd)
		v, err := redis.String(askingDo(t, at, "GET", k))
		require.NoError(t, err)
		assert.Equal(t, tt.value, v, "%v", tt.cmd)

		got, err := c.Do(ctx, "GET", k)
		require.NoError(t, err, "%v: a read after the move", tt.cmd)
		assert.Equal(t, []byte(tt.value), got, "%v: a read after the move", tt.cmd)
		assert.Equal(t, []string{at.Addr}, askPlacesOf(t, all, k), "%v: the key's places after a read", tt.cmd)
	}

	// A key with an expiry keeps it at the importing master.
	k := "newask:{ttl}"
	owner, _ := ownerAndOther(t, nc, k)
	_, err := owner.Do("SET", "already:{ttl}", "x")
	require.NoError(t, err)
	_, err = byAddr[ringOwner(t, from, k)].Do("SET", k, "7", "EX", "1000")
	require.NoError(t, err)
	_, dst := halfMove(t, nc, k, "already:{ttl}")
	got, err := c.Do(ctx, "INCR", k)
	require.NoError(t, err)
	assert.Equal(t, int64(8), got)
	assert.Equal(t, []string{dst.Addr}, askPlacesOf(t, all, k))
	ttl, err := redis.Int64(askingDo(t, dst, "PTTL", k))
	require.NoError(t, err)
	assert.True(t, ttl > 900_000 && ttl <= 1_000_000, "the expiry moved with the key: PTTL %d", ttl)

	// A pipeline whose two keys of one half-moved slot leave one ring
	// shard in one MIGRATE: both go to the importing master.
	ka, kb := "newask:{pipe}:a", ""
	for i := 0; kb == ""; i++ {
		o := "newask:{pipe}:b" + strconv.Itoa(i)
		if ringOwner(t, from, o) == ringOwner(t, from, ka) {
			kb = o
		}
		require.Less(t, i, 100000)
	}
	owner, _ = ownerAndOther(t, nc, ka)
	_, err = owner.Do("SET", "already:{pipe}", "x")
	require.NoError(t, err)
	for _, key := range []string{ka, kb} {
		_, err := byAddr[ringOwner(t, from, key)].Do("SET", key, "10")
		require.NoError(t, err)
	}
	_, dst = halfMove(t, nc, ka, "already:{pipe}")
	p := c.Pipeline()
	p.Send("INCR", ka)
	p.Send("INCR", kb)
	res, err := p.Exec(ctx)
	require.NoError(t, err)
	require.Len(t, res, 2)
	for i, r := range res {
		require.NoError(t, r.Err, "%d", i)
		assert.Equal(t, int64(11), r.Reply, "%d", i)
	}
	for _, key := range []string{ka, kb} {
		assert.Equal(t, []string{dst.Addr}, askPlacesOf(t, all, key), key)
	}
}

// askingDo runs one command at s after ASKING, on a connection of its
// own: a master importing the command's slot answers it so. A server out
// of cluster mode refuses the ASKING, and answers the command.
func askingDo(t *testing.T, s *redistest.Server, cmd string, args ...any) (any, error) {
	t.Helper()
	conn, err := redis.Dial("tcp", s.Addr)
	require.NoError(t, err)
	defer conn.Close()
	if _, err := conn.Do("ASKING"); err != nil {
		var re redis.Error
		require.ErrorAs(t, err, &re, "ASKING at %s", s.Addr)
	}
	return conn.Do(cmd, args...)
}

// askPlacesOf returns the addresses of the servers that hold key, asked
// after ASKING: a master importing the key's slot counts too.
func askPlacesOf(t *testing.T, servers []*redistest.Server, key string) []string {
	t.Helper()
	var out []string
	for _, s := range servers {
		if n, err := redis.Int(askingDo(t, s, "EXISTS", key)); err == nil && n == 1 {
			out = append(out, s.Addr)
		}
	}
	return out
}

// TestReview21ConcurrentMovesToAnImportingMasterLoseNoUpdate: two
// processes of a migration into a cluster INCR the same ring keys at once
// while their slot is half moved inside the cluster. Each moves a key to
// the importing master itself (DUMP, ASKING RESTORE, DEL: not one step as
// MIGRATE is); the other meets its copy there (BUSYKEY) or none left at
// the old owner. No INCR may be lost or start afresh, and each key must end
// at the importing master alone.
func TestReview21ConcurrentMovesToAnImportingMasterLoseNoUpdate(t *testing.T) {
	ctx := oldClusterContext(t, 2*time.Minute)
	ringServers := redistest.StartNTB(t, 2, redistest.Options{})
	nc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	from, to := ringConfig(ringServers), clusterConfig(nc.Seeds()...)
	byAddr := serversByAddr(ringServers)
	clients := []*shard.Client{newClient(t, armedConfig(from, to)), newClient(t, armedConfig(from, to))}
	all := append(append([]*redistest.Server{}, ringServers...), nc.Masters()...)

	var keys []string
	for i := range 8 {
		keys = append(keys, "newask:{race}:"+strconv.Itoa(i))
	}
	owner, _ := ownerAndOther(t, nc, keys[0])
	_, err := owner.Do("SET", "already:{race}", "x")
	require.NoError(t, err)
	for _, k := range keys {
		_, err := byAddr[ringOwner(t, from, k)].Do("SET", k, "100")
		require.NoError(t, err)
	}
	_, dst := halfMove(t, nc, keys[0], "already:{race}")

	const perClient = 3
	errs := make(chan error, len(keys)*len(clients)*perClient)
	var wg sync.WaitGroup
	for _, k := range keys {
		for _, c := range clients {
			for range perClient {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := c.Do(ctx, "INCR", k); err != nil {
						errs <- err
					}
				}()
			}
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	want := strconv.Itoa(100 + len(clients)*perClient)
	for _, k := range keys {
		assert.Equal(t, []string{dst.Addr}, askPlacesOf(t, all, k), k)
		v, err := redis.String(askingDo(t, dst, "GET", k))
		require.NoError(t, err, k)
		assert.Equal(t, want, v, "%s: every INCR counted once", k)
	}
}

package shard_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// movingKeys returns n keys with prefix p whose owner differs between
// from and to.
func movingKeys(t *testing.T, from, to shard.Config, p string, n int) []string {
	t.Helper()
	moving, _ := keysByMove(t, from, to, p+"%d", n, 0)
	return moving
}

// keysByMove sorts the names fmt.Sprintf(format, i), for i = 0, 1, ...,
// into those whose owner differs between from and to (moving) and the
// others (staying), until it has at least nMoving of the first and
// nStaying of the second; it returns every name it looked at.
func keysByMove(t *testing.T, from, to shard.Config, format string, nMoving, nStaying int) (moving, staying []string) {
	t.Helper()
	for i := 0; (len(moving) < nMoving || len(staying) < nStaying) && i < 100000; i++ {
		k := fmt.Sprintf(format, i)
		if ringOwner(t, from, k) != ringOwner(t, to, k) {
			moving = append(moving, k)
		} else {
			staying = append(staying, k)
		}
	}
	require.GreaterOrEqual(t, len(moving), nMoving, "keys that move")
	require.GreaterOrEqual(t, len(staying), nStaying, "keys that stay")
	return moving, staying
}

// TestMigrationOverwritesNeedNoMove: during a migration a single blind
// overwrite (SET without a condition, SETEX, PSETEX) of a key still at its
// old owner is written at the new owner and the old copy deleted, with no
// MIGRATE; a SET whose effect depends on the old copy (NX, XX, GET,
// KEEPTTL) still moves the key first.
func TestMigrationOverwritesNeedNoMove(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	byAddr := serversByAddr(servers)
	c := newClient(t, armedConfig(from, to))
	keys := movingKeys(t, from, to, "ow:", 17)

	ttl := func(t *testing.T, k string) int {
		t.Helper()
		s, err := byAddr[ringOwner(t, to, k)].Do("PTTL", k)
		require.NoError(t, err)
		n, err := strconv.Atoi(s)
		require.NoError(t, err)
		return n
	}
	tests := []struct {
		name    string
		args    []any
		reply   any    // the command's reply, as redis.String or nil
		value   string // the value at the new owner afterwards
		ttlMin  int    // ms; -1: no expiry
		ttlMax  int
		migrate bool // the key moved with a MIGRATE
	}{
		{"SET", []any{"new"}, "OK", "new", -1, -1, false},
		{"SET EX", []any{"new", "EX", "50"}, "OK", "new", 40000, 50000, false},
		{"SET PX", []any{"new", "PX", "50000"}, "OK", "new", 40000, 50000, false},
		{"SET PXAT moves first (the server's clock)", []any{"new", "PXAT", "99999999999999"}, "OK", "new", 1, 1 << 62, true},
		{"SETEX", nil, "OK", "new", 40000, 50000, false},
		{"PSETEX", nil, "OK", "new", 40000, 50000, false},
		{"SET NX", []any{"new", "NX"}, nil, "old", 90000, 100000, true},
		{"SET XX", []any{"new", "XX"}, "OK", "new", -1, -1, true},
		{"SET GET", []any{"new", "GET"}, "old", "new", -1, -1, true},
		{"SET KEEPTTL", []any{"new", "KEEPTTL"}, "OK", "new", 90000, 100000, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := keys[i]
			old := ringOwner(t, from, k)
			_, err := byAddr[old].Do("SET", k, "old", "EX", "100")
			require.NoError(t, err)
			before := migrateCalls(t, servers)
			var reply any
			switch tt.name {
			case "SETEX":
				reply, err = c.Do(ctx, "SETEX", k, 50, "new")
			case "PSETEX":
				reply, err = c.Do(ctx, "PSETEX", k, 50000, "new")
			default:
				reply, err = c.Do(ctx, "SET", append([]any{k}, tt.args...)...)
			}
			require.NoError(t, err)
			if tt.reply == nil {
				assert.Nil(t, reply)
			} else {
				s, err := redis.String(reply, nil)
				require.NoError(t, err)
				assert.Equal(t, tt.reply, s)
			}
			assert.Equal(t, []string{ringOwner(t, to, k)}, holders(t, servers, k), "the key sits at its new owner only")
			v, err := byAddr[ringOwner(t, to, k)].Do("GET", k)
			require.NoError(t, err)
			assert.Equal(t, tt.value, v)
			got := ttl(t, k)
			if tt.ttlMin < 0 {
				assert.Equal(t, -1, got, "no expiry")
			} else {
				assert.GreaterOrEqual(t, got, tt.ttlMin)
				assert.LessOrEqual(t, got, tt.ttlMax)
			}
			if tt.migrate {
				assert.Greater(t, migrateCalls(t, servers), before, "moved with a MIGRATE")
			} else {
				assert.Equal(t, before, migrateCalls(t, servers), "no MIGRATE for a blind overwrite")
			}
		})
	}

	t.Run("a key with a copy at both owners keeps the overwrite", func(t *testing.T) {
		k := keys[len(tests)]
		_, err := byAddr[ringOwner(t, from, k)].Do("SET", k, "old")
		require.NoError(t, err)
		_, err = byAddr[ringOwner(t, to, k)].Do("SET", k, "restored")
		require.NoError(t, err)
		_, err = c.Do(ctx, "SET", k, "new")
		require.NoError(t, err)
		assert.Equal(t, []string{ringOwner(t, to, k)}, holders(t, servers, k))
		v, err := redis.String(c.Do(ctx, "GET", k))
		require.NoError(t, err)
		assert.Equal(t, "new", v)
	})

	t.Run("in a pipeline the key moves first, in the batch's order", func(t *testing.T) {
		k := keys[len(tests)+1]
		_, err := byAddr[ringOwner(t, from, k)].Do("SET", k, "old")
		require.NoError(t, err)
		before := migrateCalls(t, servers)
		p := c.Pipeline()
		p.Send("GET", k)
		p.Send("SET", k, "new")
		p.Send("GET", k)
		replies, err := p.Exec(ctx)
		require.NoError(t, err)
		require.Len(t, replies, 3)
		first, err := redis.String(replies[0].Reply, replies[0].Err)
		require.NoError(t, err)
		last, err := redis.String(replies[2].Reply, replies[2].Err)
		require.NoError(t, err)
		assert.Equal(t, "old", first)
		assert.Equal(t, "new", last)
		assert.Greater(t, migrateCalls(t, servers), before)
	})
}

// TestMigrationOverwriteOldOwnerDown: when the old owner cannot be reached,
// a blind overwrite fails with a *MigrateError (its write may have
// happened, as for a lost reply), and the old owner's keys are the only
// ones that fail.
func TestMigrationOverwriteOldOwnerDown(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	c := newClient(t, armedConfig(from, to))
	keys := movingKeys(t, from, to, "down:", 64)
	dead := ringOwner(t, from, keys[0])
	for _, s := range servers {
		if s.Addr == dead {
			require.NoError(t, s.Kill())
		}
	}
	var failed, ok, sent int
	for _, k := range keys {
		_, err := c.Do(ctx, "SET", k, "v")
		if ringOwner(t, from, k) == dead {
			require.Error(t, err, k)
			assert.True(t, errors.Is(err, shard.ErrMigration), "%v", err)
			var me *shard.MigrateError
			require.True(t, errors.As(err, &me), "%v", err)
			assert.Equal(t, dead, me.From.Addr)
			failed++
			// Sent says whether the write reached the new owner: before
			// the client knows the old owner is down, the overwrite is
			// written there and only its delete fails; after, it is not
			// sent (the move it needs fails first).
			dst, found := serversByAddr(servers)[me.To.Addr]
			require.True(t, found, "new owner %s", me.To.Addr)
			got, err := dst.Do("GET", k)
			require.NoError(t, err)
			if me.Sent {
				sent++
				assert.Equal(t, "v", got, "%s: a write reported sent is at the new owner", k)
			} else {
				assert.Equal(t, "", got, "%s: a write reported not sent is not at the new owner", k)
			}
		} else {
			require.NoError(t, err, k)
			ok++
		}
	}
	assert.Positive(t, failed)
	assert.Positive(t, ok)
	assert.Positive(t, sent, "the first overwrite on the dead owner is written before the client knows")
	info, _ := c.Migration()
	assert.Equal(t, int64(ok), info.Overwrites, "overwrites done")
	assert.Equal(t, int64(failed), info.Failures, "each failed overwrite or move counted once")
	assert.Zero(t, info.Moves+info.OldReads)
}

// TestMigrationOverwritesAreLinearizable runs blind overwrites of moving
// keys while other clients read them and increment them:
//
//   - a read that starts after an overwrite returned sees it, and a reader
//     that has seen a key's new value never sees the old one again;
//   - an INCR racing an overwrite is ordered with it: either the INCR came
//     first (it answered old+1, and the value is the overwrite's) or the
//     overwrite did (the INCR answered overwrite+1, and that is the value).
func TestMigrationOverwritesAreLinearizable(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	byAddr := serversByAddr(servers)
	migrating := func() *shard.Client { return newClient(t, armedConfig(from, to)) }
	writer, reader, incr := migrating(), migrating(), migrating()

	t.Run("reads", func(t *testing.T) {
		keys := movingKeys(t, from, to, "lin:", 100)
		for _, k := range keys {
			_, err := byAddr[ringOwner(t, from, k)].Do("SET", k, "old")
			require.NoError(t, err)
		}
		acked := make([]atomic.Bool, len(keys))
		var stale, backwards atomic.Int64
		var readErr atomic.Value
		done := make(chan struct{})
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				seen := make([]bool, len(keys))
				for {
					select {
					case <-done:
						return
					default:
					}
					for i, k := range keys {
						wasAcked := acked[i].Load()
						v, err := redis.String(reader.Do(ctx, "GET", k))
						if err != nil {
							readErr.Store(err)
							return
						}
						switch {
						case v == "new":
							seen[i] = true
						case seen[i]:
							backwards.Add(1)
						case wasAcked:
							stale.Add(1)
						}
					}
				}
			}()
		}
		for i, k := range keys {
			_, err := writer.Do(ctx, "SET", k, "new")
			require.NoError(t, err)
			acked[i].Store(true)
			// Another client's read right after the acknowledgement.
			v, err := redis.String(reader.Do(ctx, "GET", k))
			require.NoError(t, err)
			require.Equal(t, "new", v, "%s read right after its overwrite returned", k)
		}
		close(done)
		wg.Wait()
		if err := readErr.Load(); err != nil {
			t.Fatal(err)
		}
		assert.Zero(t, stale.Load(), "reads after an acknowledged overwrite returned the old value")
		assert.Zero(t, backwards.Load(), "a reader saw the old value after the new one")
		for _, k := range keys {
			require.Equal(t, []string{ringOwner(t, to, k)}, holders(t, servers, k), k)
		}
	})

	t.Run("increments", func(t *testing.T) {
		keys := movingKeys(t, from, to, "race:", 200)
		for _, k := range keys {
			_, err := byAddr[ringOwner(t, from, k)].Do("SET", k, "10")
			require.NoError(t, err)
		}
		// Each key's SET and INCR start together, from two clients.
		incrReplies := make([]int64, len(keys))
		for i, k := range keys {
			start := make(chan struct{})
			var setErr, incrErr error
			var wg sync.WaitGroup
			wg.Add(2)
			go func() {
				defer wg.Done()
				<-start
				// Staggered, so that the INCR's move wins some races: a
				// race to create, not a wait for a condition.
				time.Sleep(time.Duration(i%8) * 150 * time.Microsecond)
				_, setErr = writer.Do(ctx, "SET", k, "100")
			}()
			go func() {
				defer wg.Done()
				<-start
				incrReplies[i], incrErr = redis.Int64(incr.Do(ctx, "INCR", k))
			}()
			close(start)
			wg.Wait()
			require.NoError(t, setErr, k)
			require.NoError(t, incrErr, k)
		}
		var incrFirst, setFirst int
		for i, k := range keys {
			v, err := redis.Int64(reader.Do(ctx, "GET", k))
			require.NoError(t, err)
			switch {
			case incrReplies[i] == 11 && v == 100:
				incrFirst++
			case incrReplies[i] == 101 && v == 101:
				setFirst++
			default:
				t.Errorf("%s: INCR answered %d and the value is %d: no order of the two commands gives that", k, incrReplies[i], v)
			}
			assert.Equal(t, []string{ringOwner(t, to, k)}, holders(t, servers, k), k)
		}
		t.Logf("INCR first %d, SET first %d", incrFirst, setFirst)
	})
}

// TestMigrationOverwriteExpiredInFlight: a blind overwrite with an expiry
// that passes while it is in flight, during which another process moves
// the old copy (its MIGRATE meets no copy at the new owner, which has
// expired, and brings the old value back), must not report success: the
// value before the write is what remains.
func TestMigrationOverwriteExpiredInFlight(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	byAddr := serversByAddr(servers)
	var moveOld atomic.Value // the key another process moves after the SET
	var hookErr atomic.Value
	cfg := armedConfig(from, to)
	// Between the overwrite's write at the new owner and the delete of
	// the old copy.
	shard.BetweenOverwriteSteps(func(*shard.Client) {
		k, _ := moveOld.Load().(string)
		if k == "" {
			return
		}
		time.Sleep(20 * time.Millisecond) // past the overwrite's 5 ms expiry: the condition under test
		host, port, _ := strings.Cut(ringOwner(t, to, k), ":")
		if _, err := byAddr[ringOwner(t, from, k)].Do("MIGRATE", host, port, "", "0", "5000", "KEYS", k); err != nil {
			hookErr.Store(err)
		}
	})
	t.Cleanup(func() { shard.BetweenOverwriteSteps(nil) })
	c := newClient(t, cfg)
	keys := movingKeys(t, from, to, "exp:", 2)
	// overwrite puts "old" at k's old owner and overwrites it with "new"
	// and expiry px (ms) while the hook moves the old copy.
	overwrite := func(t *testing.T, k, px string) error {
		_, err := byAddr[ringOwner(t, from, k)].Do("SET", k, "old")
		require.NoError(t, err)
		moveOld.Store(k)
		defer moveOld.Store("")
		_, err = c.Do(ctx, "SET", k, "new", "PX", px)
		return err
	}

	t.Run("expired and moved back meanwhile: not a success", func(t *testing.T) {
		k := keys[0]
		err := overwrite(t, k, "5")
		if e := hookErr.Load(); e != nil {
			t.Fatal(e)
		}
		require.Error(t, err)
		assert.True(t, errors.Is(err, shard.ErrMigration), "%v", err)
		var me *shard.MigrateError
		require.ErrorAs(t, err, &me)
		assert.True(t, me.Sent, "the overwrite was sent: its outcome is unknown")
		v, err := byAddr[ringOwner(t, to, k)].Do("GET", k)
		require.NoError(t, err)
		assert.Equal(t, "old", v, "the other process's move brought the old value back")
	})

	t.Run("a long expiry: the move meets the overwrite", func(t *testing.T) {
		k := keys[1]
		require.NoError(t, overwrite(t, k, "60000"))
		e, _ := hookErr.Load().(error)
		require.Error(t, e, "the other process's MIGRATE meets the overwrite")
		assert.Contains(t, e.Error(), "BUSYKEY")
		v, err := redis.String(c.Do(ctx, "GET", k))
		require.NoError(t, err)
		assert.Equal(t, "new", v)
		assert.Equal(t, []string{ringOwner(t, to, k)}, holders(t, servers, k))
	})
}

// TestRollbackFenceWaitsForAnOverwrite holds a blind overwrite between its
// write at the new owner and the delete of the old copy while the client
// turns around (AbortMigration once armed) and the reverse fence goes up:
// the reverse must not be acknowledged while the overwrite is held (its
// moves would fall between the two steps), and once it is armed the key
// moves back with the overwritten value.
func TestRollbackFenceWaitsForAnOverwrite(t *testing.T) {
	ctx := context.Background()
	s := newSwitchSetup(t, 20*time.Second)
	gate := newHoldGate()
	gate.holdOverwrite(t)
	c := s.migrating(t, nil)
	s.fenceAndArm(t, c)
	k := s.moving(t, "rb", 1)[0]
	oldOwner := s.setAtOldOwner(t, k, "old")
	done := gate.hold(t, func() error {
		_, err := c.Do(ctx, "SET", k, "new")
		return err
	})
	require.NoError(t, c.AbortMigration(ctx))
	// The reverse fence waits for the held overwrite.
	s.fenceOverHeld(t, c, gate.release, done, "an overwrite was between its two steps")
	v, err := redis.String(c.Do(ctx, "GETEX", k)) // a write that changes nothing: moves the key back
	require.NoError(t, err)
	assert.Equal(t, "new", v)
	assert.Equal(t, []string{oldOwner}, holders(t, s.servers, k), "back at its owner in the old topology, only there")
}

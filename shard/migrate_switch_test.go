package shard_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
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

// switchSetup is a 3 -> 4 ring migration over real servers whose fence
// the test drives by hand, as reshard.Arm does.
type switchSetup struct {
	servers  []*redistest.Server
	from, to shard.Config
}

func newSwitchSetup(t *testing.T, readTimeout time.Duration) *switchSetup {
	t.Helper()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	s := &switchSetup{servers: servers, from: ringConfig(servers[:3]), to: ringConfig(servers)}
	s.from.Pool.ReadTimeout, s.to.Pool.ReadTimeout = readTimeout, readTimeout
	return s
}

// migrating returns a client of the migrating config (waiting behind the
// fence) with hooks.
func (s *switchSetup) migrating(t *testing.T, hooks *shard.Hooks) *shard.Client {
	t.Helper()
	cfg := s.to
	from := s.from
	cfg.Migration = &shard.Migration{From: &from}
	cfg.Hooks = hooks
	c := newClient(t, cfg)
	info, ok := c.Migration()
	require.True(t, ok)
	require.Equal(t, shard.PhaseWaiting, info.Phase)
	return c
}

// moving returns n keys with prefix whose owner changes.
func (s *switchSetup) moving(t *testing.T, prefix string, n int) []string {
	t.Helper()
	var out []string
	for i := 0; len(out) < n; i++ {
		k := fmt.Sprintf("%s:%d", prefix, i)
		if ringOwner(t, s.from, k) != ringOwner(t, s.to, k) {
			out = append(out, k)
		}
	}
	return out
}

// setAtOldOwner sets k to v directly at its owner in the old topology,
// and returns that owner's address.
func (s *switchSetup) setAtOldOwner(t *testing.T, k, v string) string {
	t.Helper()
	oldOwner := ringOwner(t, s.from, k)
	for _, srv := range s.servers {
		if srv.Addr == oldOwner {
			_, err := srv.Do("SET", k, v)
			require.NoError(t, err)
		}
	}
	return oldOwner
}

// mark sets the fence's marker on every old node.
func (s *switchSetup) mark(t *testing.T, c *shard.Client, p shard.MigrationPhase) {
	t.Helper()
	info, _ := c.Migration()
	for _, srv := range s.servers[:3] {
		_, err := srv.Do("SET", shard.FenceKey(info.FromID, info.ToID), shard.FenceValue(p, time.Now()))
		require.NoError(t, err)
	}
}

// beaconSays reports whether the client's beacon on the first old node is
// named after phase p.
func (s *switchSetup) beaconSays(p shard.MigrationPhase) bool {
	list, err := s.servers[0].Do("CLIENT", "LIST")
	return err == nil && strings.Contains(list, ":"+p.String()+":")
}

// fenceAndArm walks c through the fence as the mover does: the fenced
// marker, every beacon renamed fenced, the armed marker.
func (s *switchSetup) fenceAndArm(t *testing.T, c *shard.Client) {
	t.Helper()
	s.mark(t, c, shard.PhaseFenced)
	waitFor(t, 20*time.Second, "the beacons to acknowledge the fence", func() bool { return s.beaconSays(shard.PhaseFenced) })
	s.mark(t, c, shard.PhaseArmed)
	waitFor(t, 20*time.Second, "the client to arm", func() bool {
		i, _ := c.Migration()
		return i.Phase == shard.PhaseArmed
	})
}

// fenceOverHeld raises the fence (phase to) while a command is held
// between two of its steps, and checks that the beacons do not
// acknowledge it until release lets the command go (what stands in
// stalled names it in the failure); done carries the command's error,
// which must be nil. It then arms the client.
func (s *switchSetup) fenceOverHeld(t *testing.T, c *shard.Client, release chan struct{}, done <-chan error, stalled string) {
	t.Helper()
	s.mark(t, c, shard.PhaseFenced)
	waitFor(t, 10*time.Second, "the client to switch", func() bool {
		i, _ := c.Migration()
		return i.Phase == shard.PhaseFenced
	})
	// The switch waits for the held command: no acknowledgement over
	// several polls of the marker.
	for range 5 {
		time.Sleep(shard.FencePoll)
		require.False(t, s.beaconSays(shard.PhaseFenced), "acknowledged the fence while %s", stalled)
	}
	close(release)
	select {
	case err := <-done:
		require.NoError(t, err, "the held command")
	case <-time.After(30 * time.Second):
		t.Fatal("the held command never returned")
	}
	waitFor(t, 10*time.Second, "the acknowledgement", func() bool { return s.beaconSays(shard.PhaseFenced) })
	s.mark(t, c, shard.PhaseArmed)
	waitFor(t, 10*time.Second, "the client to arm", func() bool {
		i, _ := c.Migration()
		return i.Phase == shard.PhaseArmed
	})
}

// TestFenceSwitchWaitsForAWritePlannedBefore holds an MSET between its
// planning (by the old topology, its parts on the old owners) and its
// execution while the fence goes up: the switch must wait for it (the
// beacons do not acknowledge), and it must then succeed whole — not fail a
// part for having been planned a moment too early — and every value must
// be found at its new owner once armed.
func TestFenceSwitchWaitsForAWritePlannedBefore(t *testing.T) {
	for _, name := range []string{"MSET", "DEL", "PIPELINE"} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			s := newSwitchSetup(t, 20*time.Second)
			gate := newHoldGate()
			gate.holdPlanned(t, name)
			c := s.migrating(t, nil)
			keys := s.moving(t, "ws", 6)
			args := make([]any, 0, 2*len(keys))
			for i, k := range keys {
				args = append(args, k, "v"+strconv.Itoa(i))
			}
			if name == "DEL" {
				_, err := c.Do(ctx, "MSET", args...)
				require.NoError(t, err)
			}
			gate.arm()
			done := make(chan error, 1)
			go func() {
				var err error
				switch name {
				case "MSET":
					_, err = c.Do(ctx, "MSET", args...)
				case "DEL":
					var n int
					n, err = redis.Int(c.Do(ctx, "DEL", toAny(keys)...))
					if err == nil && n != len(keys) {
						err = fmt.Errorf("DEL removed %d keys, want %d", n, len(keys))
					}
				default:
					p := c.Pipeline()
					for i := 0; i < len(args); i += 2 {
						p.Send("SET", args[i], args[i+1])
					}
					var res []shard.Result
					res, err = p.Exec(ctx)
					for _, r := range res {
						err = errors.Join(err, r.Err)
					}
				}
				done <- err
			}()
			<-gate.held
			s.fenceOverHeld(t, c, gate.release, done, "a "+name+" planned by the old topology was held")
			for i, k := range keys {
				v, err := c.Do(ctx, "GETEX", k) // a write that changes nothing: moves the key
				require.NoError(t, err)
				if name == "DEL" {
					assert.Nil(t, v, "%s deleted", k)
					assert.Empty(t, holders(t, s.servers, k))
					continue
				}
				assert.Equal(t, "v"+strconv.Itoa(i), fmt.Sprint(redisString(v)), "%s", k)
				assert.Equal(t, []string{ringOwner(t, s.to, k)}, holders(t, s.servers, k), "%s at its new owner only", k)
			}
		})
	}
}

func toAny(keys []string) []any {
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = k
	}
	return out
}

func redisString(v any) string {
	s, _ := redis.String(v, nil)
	return s
}

// TestFenceSwitchCutsOffAHungCommand: a command planned by the old
// topology that never ends by itself (BLPOP with no timeout, a context
// without deadline) must not hold the switch forever. After the read
// timeout it is cut off with ErrFenceSwitched, the server no longer
// blocks it, and the beacons acknowledge.
func TestFenceSwitchCutsOffAHungCommand(t *testing.T) {
	ctx := context.Background()
	s := newSwitchSetup(t, 500*time.Millisecond)
	c := s.migrating(t, nil)
	k := s.moving(t, "hung", 1)[0]
	var old *redistest.Server
	for _, srv := range s.servers {
		if srv.Addr == ringOwner(t, s.from, k) {
			old = srv
		}
	}
	require.NotNil(t, old)
	done := make(chan error, 1)
	go func() {
		_, err := c.Do(ctx, "BLPOP", k, 0)
		done <- err
	}()
	blocked := func() bool {
		info, err := old.Do("INFO", "clients")
		return err == nil && strings.Contains(info, "blocked_clients:1")
	}
	waitFor(t, 10*time.Second, "BLPOP to block at the old owner", blocked)
	start := time.Now()
	s.mark(t, c, shard.PhaseFenced)
	waitFor(t, 20*time.Second, "the beacons to acknowledge despite the hung command", func() bool { return s.beaconSays(shard.PhaseFenced) })
	select {
	case err := <-done:
		require.Error(t, err)
		assert.ErrorIs(t, err, shard.ErrFenceSwitched)
		assert.ErrorIs(t, err, shard.ErrMigration)
		assert.True(t, strings.HasPrefix(err.Error(), "shardis: "), err.Error())
	case <-time.After(20 * time.Second):
		t.Fatal("the hung BLPOP was not cut off")
	}
	assert.GreaterOrEqual(t, time.Since(start), 400*time.Millisecond, "the switch waited about a read timeout first")
	waitFor(t, 10*time.Second, "the old owner to drop the blocked client", func() bool { return !blocked() })
	// A command after the switch is planned by the new topology.
	_, err := c.Do(ctx, "SET", "after:cut", "1")
	require.NoError(t, err)
}

// TestFenceSwitchTxPlannedBeforeRunsAgain: a transaction picked its node
// by the old topology and is still open (between WATCH and EXEC) when the
// fence switches, is acknowledged, arms, and another command writes its
// key at the new owner. Committing at the old owner would hide its write
// (the new owner's copy wins); Client.Tx must instead run it again by the
// new topology, so that its value is the latest.
func TestFenceSwitchTxPlannedBeforeRunsAgain(t *testing.T) {
	ctx := context.Background()
	s := newSwitchSetup(t, 5*time.Second)
	c := s.migrating(t, nil)
	k := s.moving(t, "tx", 1)[0]
	inTx, release := make(chan struct{}), make(chan struct{})
	var attempts atomic.Int32
	done := make(chan error, 1)
	go func() {
		_, err := c.Tx(ctx, []string{k}, func(tx *shard.Tx) error {
			if attempts.Add(1) == 1 {
				close(inTx)
				<-release
			}
			return tx.Queue("SET", k, "tx")
		})
		done <- err
	}()
	<-inTx
	s.fenceAndArm(t, c) // the open transaction does not hold the switch
	_, err := c.Do(ctx, "SET", k, "new")
	require.NoError(t, err)
	close(release)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the transaction never returned")
	}
	assert.Equal(t, int32(2), attempts.Load(), "ran again by the new topology")
	v, err := redis.String(c.Do(ctx, "GET", k))
	require.NoError(t, err)
	assert.Equal(t, "tx", v, "the transaction's write is the latest")
	assert.Equal(t, []string{ringOwner(t, s.to, k)}, holders(t, s.servers, k))
}

// TestFenceSwitchConnTxPlannedBeforeFails: the same with a Conn, whose
// caller drives WATCH/MULTI/EXEC: EXEC fails cleanly (ErrTxAborted and
// ErrFenceSwitched), nothing of the transaction runs at the old owner, and
// the Conn works afterwards.
func TestFenceSwitchConnTxPlannedBeforeFails(t *testing.T) {
	ctx := context.Background()
	s := newSwitchSetup(t, 5*time.Second)
	c := s.migrating(t, nil)
	k := s.moving(t, "ctx", 1)[0]
	conn := c.Conn()
	defer conn.Close()
	_, err := conn.Do("WATCH", k)
	require.NoError(t, err)
	_, err = conn.Do("MULTI")
	require.NoError(t, err)
	s.fenceAndArm(t, c)
	_, err = c.Do(ctx, "SET", k, "new")
	require.NoError(t, err)
	_, err = conn.Do("SET", k, "tx")
	require.ErrorIs(t, err, shard.ErrFenceSwitched)
	_, err = conn.Do("EXEC")
	require.Error(t, err)
	assert.ErrorIs(t, err, shard.ErrTxAborted)
	assert.ErrorIs(t, err, shard.ErrFenceSwitched)
	v, err := redis.String(c.Do(ctx, "GET", k))
	require.NoError(t, err)
	assert.Equal(t, "new", v)
	assert.Equal(t, []string{ringOwner(t, s.to, k)}, holders(t, s.servers, k), "nothing committed at the old owner")

	// The retry, as a caller of EXEC would run it, goes by the new topology.
	_, err = conn.Do("WATCH", k)
	require.NoError(t, err)
	_, err = conn.Do("MULTI")
	require.NoError(t, err)
	_, err = conn.Do("SET", k, "tx")
	require.NoError(t, err)
	r, err := redis.Values(conn.Do("EXEC"))
	require.NoError(t, err)
	require.Len(t, r, 1)
	v, err = redis.String(c.Do(ctx, "GET", k))
	require.NoError(t, err)
	assert.Equal(t, "tx", v)
}

// TestFenceSwitchUnderLoad: 8 goroutines write with cross-shard MSET, DEL,
// pipelines and transactions while a tracer-like hook delays some
// commands between planning and execution, and the fence switches and
// arms; a new migrating client each round. No operation may fail, and
// every acknowledged write must be found, at its new owner.
func TestFenceSwitchUnderLoad(t *testing.T) {
	const (
		rounds  = 3
		workers = 8
		perKeys = 12
	)
	ctx := context.Background()
	s := newSwitchSetup(t, 10*time.Second) // moving keys wait for arming at most this
	for round := range rounds {
		for _, srv := range s.servers {
			_, err := srv.Do("FLUSHALL")
			require.NoError(t, err)
		}
		// A slow tracer's Start hook (outside the fence's count: an
		// operation it outlasts the plan of is planned again), and
		// callers delayed between planning and execution.
		delay := func() {
			if rand.IntN(4) == 0 {
				time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
			}
		}
		shard.AfterPlanning(func(*shard.Client, string) { delay() })
		t.Cleanup(func() { shard.AfterPlanning(nil) })
		c := s.migrating(t, &shard.Hooks{Start: func(ctx context.Context, op *shard.Op) context.Context {
			delay()
			return ctx
		}})
		type state struct {
			vals     map[string]string // "" when deleted
			counters map[string]int
			errs     []error
			ops      int
		}
		states := make([]*state, workers)
		var ops atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := range workers {
			st := &state{vals: map[string]string{}, counters: map[string]int{}}
			states[w] = st
			wg.Add(1)
			go func() {
				defer wg.Done()
				key := func(j int) string { return fmt.Sprintf("ld:%d:%d:%d", round, w, j) }
				for seq := 0; ; seq++ {
					select {
					case <-stop:
						return
					default:
					}
					var err error
					switch seq % 4 {
					case 0: // cross-shard MSET
						args := []any{}
						set := map[string]string{}
						for range 3 {
							k := key(rand.IntN(perKeys))
							v := fmt.Sprintf("%d-%d", w, seq)
							args, set[k] = append(args, k, v), v
						}
						if _, err = c.Do(ctx, "MSET", args...); err == nil {
							for k, v := range set {
								st.vals[k] = v
							}
						}
					case 1: // cross-shard DEL
						a, b := key(rand.IntN(perKeys)), key(rand.IntN(perKeys))
						if _, err = c.Do(ctx, "DEL", a, b); err == nil {
							st.vals[a], st.vals[b] = "", ""
						}
					case 2: // a pipeline of SETs
						p := c.Pipeline()
						set := map[string]string{}
						for i := range 4 {
							k := key(rand.IntN(perKeys))
							v := fmt.Sprintf("p%d-%d-%d", w, seq, i)
							p.Send("SET", k, v)
							set[k] = v // the last SET of a key wins
						}
						var res []shard.Result
						if res, err = p.Exec(ctx); err == nil {
							for _, r := range res {
								err = errors.Join(err, r.Err)
							}
						}
						if err == nil {
							for k, v := range set {
								st.vals[k] = v
							}
						}
					default: // a read-modify-write transaction on a counter
						k := fmt.Sprintf("ct:%d:%d:%d", round, w, rand.IntN(4))
						_, err = c.Tx(ctx, []string{k}, func(tx *shard.Tx) error {
							n, err := redis.Int(tx.Do("GET", k))
							if err != nil && !errors.Is(err, redis.ErrNil) {
								return err
							}
							return tx.Queue("SET", k, n+1)
						})
						if err == nil {
							st.counters[k]++
						}
					}
					if err != nil {
						st.errs = append(st.errs, fmt.Errorf("op %d: %w", seq, err))
					}
					st.ops++
					ops.Add(1)
				}
			}()
		}
		waitOps := func(n int64) {
			target := ops.Load() + n
			waitFor(t, 60*time.Second, fmt.Sprintf("%d more operations", n), func() bool { return ops.Load() >= target })
		}
		waitOps(200)
		s.mark(t, c, shard.PhaseFenced)
		waitFor(t, 20*time.Second, "the client to switch", func() bool {
			i, _ := c.Migration()
			return i.Phase == shard.PhaseFenced
		})
		waitFor(t, 20*time.Second, "the beacons to acknowledge", func() bool { return s.beaconSays(shard.PhaseFenced) })
		s.mark(t, c, shard.PhaseArmed)
		waitFor(t, 20*time.Second, "the client to arm", func() bool {
			i, _ := c.Migration()
			return i.Phase == shard.PhaseArmed
		})
		waitOps(200)
		close(stop)
		wg.Wait()

		total := 0
		for w, st := range states {
			total += st.ops
			assert.Empty(t, st.errs, "round %d worker %d: failed operations", round, w)
			for k, want := range st.vals {
				v, err := c.Do(ctx, "GETEX", k) // a write that changes nothing: moves the key
				require.NoError(t, err)
				if want == "" {
					assert.Nil(t, v, "round %d: %s was deleted last", round, k)
					assert.Empty(t, holders(t, s.servers, k), "round %d: %s", round, k)
					continue
				}
				assert.Equal(t, want, redisString(v), "round %d: %s holds its last acknowledged write", round, k)
				assert.Equal(t, []string{ringOwner(t, s.to, k)}, holders(t, s.servers, k), "round %d: %s at its new owner only", round, k)
			}
			for k, want := range st.counters {
				n, err := redis.Int(c.Do(ctx, "GET", k))
				require.NoError(t, err)
				assert.Equal(t, want, n, "round %d: counter %s equals its acknowledged increments", round, k)
			}
		}
		require.Positive(t, total)
		c.Close()
	}
}

// TestFenceSwitchGivesUpOnACallerHeldBeforeSending: a caller held (here
// by the tests' hook; in life descheduled, or stalled in a Router) between planning by the old
// topology and sending cannot hold the switch for ever: the switch stops
// waiting after its bound, and the caller, once it goes on, fails with
// ErrFenceSwitched without sending anything to the old owner.
func TestFenceSwitchGivesUpOnACallerHeldBeforeSending(t *testing.T) {
	ctx := context.Background()
	s := newSwitchSetup(t, 300*time.Millisecond)
	gate := newHoldGate()
	gate.holdPlanned(t, "")
	c := s.migrating(t, nil)
	k := s.moving(t, "held", 1)[0]
	done := gate.hold(t, func() error {
		_, err := c.Do(ctx, "SET", k, "late")
		return err
	})
	s.mark(t, c, shard.PhaseFenced)
	waitFor(t, 30*time.Second, "the switch to stop waiting for the held caller", func() bool { return s.beaconSays(shard.PhaseFenced) })
	close(gate.release)
	select {
	case err := <-done:
		require.ErrorIs(t, err, shard.ErrFenceSwitched)
		assert.True(t, strings.HasPrefix(err.Error(), "shardis: "), err.Error())
	case <-time.After(30 * time.Second):
		t.Fatal("the held SET never returned")
	}
	assert.Empty(t, holders(t, s.servers, k), "nothing was sent")
}

// TestFenceSwitchRingToClusterWaitsForAWritePlannedBefore is the same for
// a cluster client migrating from a ring: while waiting it plans by the
// ring, and an MSET planned so (its parts on two ring shards) and held
// across the switch must hold the acknowledgement, run whole at the ring,
// and be found in the cluster once armed.
func TestFenceSwitchRingToClusterWaitsForAWritePlannedBefore(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	cl := clusterForTest(t)
	from := ringConfig(servers)
	from.Pool.ReadTimeout = 20 * time.Second
	gate := newHoldGate()
	cfg := shard.Config{Mode: shard.ModeCluster, Seeds: cl.Seeds(), Pool: from.Pool, Health: from.Health,
		Migration: &shard.Migration{From: &from}}
	gate.holdPlanned(t, "MSET")
	c := newClient(t, cfg)
	info, ok := c.Migration()
	require.True(t, ok)
	require.Equal(t, shard.PhaseWaiting, info.Phase)
	// Keys on both ring shards (and on several cluster slots).
	var keys []string
	owners := map[string]bool{}
	for i := 0; len(keys) < 6 || len(owners) < 2; i++ {
		k := fmt.Sprintf("fsw-r2c:%d", i)
		keys = append(keys, k)
		owners[ringOwner(t, from, k)] = true
	}
	args := make([]any, 0, 2*len(keys))
	for i, k := range keys {
		args = append(args, k, "v"+strconv.Itoa(i))
	}
	t.Cleanup(func() { _, _ = c.Do(context.Background(), "DEL", toAny(keys)...) })
	mark := func(p shard.MigrationPhase) {
		for _, s := range servers {
			_, err := s.Do("SET", shard.FenceKey(info.FromID, info.ToID), shard.FenceValue(p, time.Now()))
			require.NoError(t, err)
		}
	}
	beacon := func(p shard.MigrationPhase) bool {
		list, err := servers[0].Do("CLIENT", "LIST")
		return err == nil && strings.Contains(list, ":"+p.String()+":")
	}
	done := gate.hold(t, func() error {
		_, err := c.Do(ctx, "MSET", args...)
		return err
	})
	mark(shard.PhaseFenced)
	waitFor(t, 10*time.Second, "the client to switch", func() bool {
		i, _ := c.Migration()
		return i.Phase == shard.PhaseFenced
	})
	for range 5 {
		time.Sleep(shard.FencePoll)
		require.False(t, beacon(shard.PhaseFenced), "acknowledged the fence while an MSET planned by the ring was held")
	}
	close(gate.release)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the MSET never returned")
	}
	for _, k := range keys {
		assert.Len(t, holders(t, servers, k), 1, "%s written at the ring, planned by it", k)
	}
	waitFor(t, 10*time.Second, "the acknowledgement", func() bool { return beacon(shard.PhaseFenced) })
	mark(shard.PhaseArmed)
	waitFor(t, 10*time.Second, "the client to arm", func() bool {
		i, _ := c.Migration()
		return i.Phase == shard.PhaseArmed
	})
	for i, k := range keys {
		v, err := redis.String(c.Do(ctx, "GETEX", k)) // a write that changes nothing: moves the key
		require.NoError(t, err)
		assert.Equal(t, "v"+strconv.Itoa(i), v)
		assert.Empty(t, holders(t, servers, k), "%s moved into the cluster", k)
	}
}

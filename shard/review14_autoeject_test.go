package shard_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
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

// flipEjection ejects and restores configured shard i of rr in a loop
// until stop is closed, and reports how many times it flipped.
func flipEjection(rr *shard.RingRouter, i int, stop <-chan struct{}, flips *atomic.Int64, wg *sync.WaitGroup) {
	defer wg.Done()
	for {
		select {
		case <-stop:
			_ = rr.Restore(i)
			return
		default:
		}
		_ = rr.Eject(i)
		_ = rr.Restore(i)
		flips.Add(1)
	}
}

// startFlippingRing starts three servers and an auto-eject ring client
// over them, and a goroutine that ejects and restores the second shard in
// a loop until the test ends; it returns the client, a key of that shard,
// and the count of ring changes.
func startFlippingRing(t *testing.T) (*shard.Client, string, *atomic.Int64) {
	t.Helper()
	c, rr, servers := autoEjectRing(t)
	key := keysByShard(t, c, 1)[servers[1].Addr][0]
	stop := make(chan struct{})
	flips := new(atomic.Int64)
	var wg sync.WaitGroup
	wg.Add(1)
	go flipEjection(rr, 1, stop, flips, &wg)
	t.Cleanup(func() { close(stop); wg.Wait() })
	return c, key, flips
}

// TestReview14PipelineSeesOneRingAcrossAnEjection: a pipeline that
// writes a key and reads it back must send both to the same shard, even
// when the shard that owns the key leaves or rejoins the ring while the
// pipeline is planned. Each command was placed by the ring of its own
// moment: the SET went to one shard and the GET to another, which
// answered with what it held.
func TestReview14PipelineSeesOneRingAcrossAnEjection(t *testing.T) {
	c, key, flips := startFlippingRing(t)
	ctx := context.Background()

	const cmds = 64 // a long plan, so that ring changes fall inside it
	mismatches := 0
	for round := 0; round < 300; round++ {
		p := c.Pipeline()
		v := fmt.Sprintf("v%d", round)
		p.Send("SET", key, v)
		for range cmds {
			p.Send("GET", key)
		}
		res, err := p.Exec(ctx)
		require.NoError(t, err)
		for j, r := range res[1:] {
			require.NoError(t, r.Err, "command %d of round %d", j+1, round)
			if got, _ := redis.String(r.Reply, nil); got != v {
				mismatches++
				if mismatches == 1 {
					t.Errorf("round %d: GET %d after SET %q in the same pipeline read %q", round, j+1, v, got)
				}
			}
		}
	}
	t.Logf("%d ring changes, %d GETs that missed their pipeline's SET", flips.Load(), mismatches)
	assert.Zero(t, mismatches)
}

// TestReview14TxSeesOneRingAcrossAnEjection: a transaction's own key,
// read with tx.Do while its shard leaves or rejoins the ring, is never
// refused as a key of another shard.
func TestReview14TxSeesOneRingAcrossAnEjection(t *testing.T) {
	c, key, flips := startFlippingRing(t)
	ctx := context.Background()

	crossShard := 0
	for round := 0; round < 300; round++ {
		_, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
			for range 16 {
				if _, err := tx.Do("GET", key); err != nil {
					return err
				}
			}
			return tx.Queue("SET", key, round)
		})
		var cse *shard.CrossShardError
		switch {
		case errors.As(err, &cse):
			crossShard++
			if crossShard == 1 {
				t.Errorf("round %d: %v", round, err)
			}
		case err != nil && !errors.Is(err, shard.ErrTxAborted):
			t.Errorf("round %d: %v", round, err)
		}
	}
	t.Logf("%d ring changes, %d transactions refused their own key", flips.Load(), crossShard)
	assert.Zero(t, crossShard)
}

// TestReview14TxRunsWhereItsKeyLivesAfterARestore: a transaction that
// WATCHed its key on the shard that stood in for an ejected one must not
// EXEC there once the owner is back in the ring: its write would land on
// a shard that no longer serves the key, unseen by every later read, and
// its WATCH guarded nothing (a concurrent transaction on the owner would
// succeed too). It runs again, fn included, on the key's owner.
func TestReview14TxRunsWhereItsKeyLivesAfterARestore(t *testing.T) {
	c, rr, servers := autoEjectRing(t)
	owner := servers[1]
	key := keysByShard(t, c, 1)[owner.Addr][0]
	ctx := context.Background()

	require.NoError(t, owner.Kill())
	waitFor(t, 20*time.Second, "the dead shard to be ejected", func() bool { return rr.Ejected(1) })
	runs := 0
	_, err := c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
		runs++
		if runs == 1 {
			// The owner comes back while the transaction is on the
			// shard standing in for it.
			if err := owner.Restart(); err != nil {
				return err
			}
			deadline := time.Now().Add(20 * time.Second)
			for rr.Ejected(1) {
				if time.Now().After(deadline) {
					return errors.New("the shard was not restored")
				}
				time.Sleep(20 * time.Millisecond)
			}
			// A write through Do would stay on the stand-in.
			_, err := tx.Do("SET", key, "stray")
			if !errors.Is(err, shard.ErrTxAborted) {
				return fmt.Errorf("tx.Do after the restore: %v, want an error matching ErrTxAborted", err)
			}
			return err
		}
		return tx.Queue("SET", key, "tx")
	})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, runs, 2, "the run on the stand-in is refused and run again")
	got, err := owner.Do("GET", key)
	require.NoError(t, err)
	assert.Equal(t, "tx", got, "the transaction's write is on the key's owner (fn ran %d times)", runs)
	v, err := redis.String(c.Do(ctx, "GET", key))
	require.NoError(t, err)
	assert.Equal(t, "tx", v, "the client reads the transaction's write")
	for _, s := range servers {
		if s != owner {
			got, err := s.Do("GET", key)
			require.NoError(t, err)
			assert.NotEqual(t, "stray", got, "no write through tx.Do after the restore on %s", s.Addr)
		}
	}
}

// TestReview14FlappingShardUnderTraffic: a shard stopped and resumed
// every 200 ms (SIGSTOP, SIGCONT) while pipelines over every shard run is
// ejected at most once per stop and restored after each; every ejection
// and restore names that shard, they alternate, the shard ends in the
// ring, the other shards' keys never fail, and no goroutine is left
// behind.
func TestReview14FlappingShardUnderTraffic(t *testing.T) {
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Health = shard.HealthOptions{Interval: 20 * time.Millisecond, FailureLimit: 1, Timeout: 100 * time.Millisecond, AutoEject: true}
	cfg.Pool.ReadTimeout = 150 * time.Millisecond
	var mu sync.Mutex
	var events []shard.NodeEvent
	cfg.Hooks = &shard.Hooks{NodeState: func(ev shard.NodeEvent) {
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
	}}
	c := newClient(t, cfg)
	rr := c.Router().(*shard.RingRouter)
	keys := keysByShard(t, c, 20)
	flapper := servers[1]
	ctx := context.Background()
	for range 3 { // warm the pools up
		p := c.Pipeline()
		for _, ks := range keys {
			for _, k := range ks {
				p.Send("SET", k, "v")
			}
		}
		_, err := p.Exec(ctx)
		require.NoError(t, err)
	}
	base := runtime.NumGoroutine()

	var otherFailures, rounds atomic.Int64
	var firstFailure atomic.Value
	stop := loopWorkers(4, func(w, n int) {
		p := c.Pipeline()
		var other []int
		for addr, ks := range keys {
			for _, k := range ks {
				if addr != flapper.Addr {
					other = append(other, p.Len())
				}
				p.Send("SET", k, fmt.Sprintf("%d-%d", w, n))
			}
		}
		res, err := p.Exec(ctx)
		if err != nil {
			firstFailure.CompareAndSwap(nil, err.Error())
			otherFailures.Add(1)
			return
		}
		for _, i := range other {
			if res[i].Err != nil {
				firstFailure.CompareAndSwap(nil, res[i].Err.Error())
				otherFailures.Add(1)
			}
		}
		rounds.Add(1)
	})
	const stops = 15
	for range stops {
		require.NoError(t, flapper.Pause())
		time.Sleep(200 * time.Millisecond) // the flapping itself, not a wait for a condition
		require.NoError(t, flapper.Resume())
		time.Sleep(200 * time.Millisecond)
	}
	stop()
	waitFor(t, 10*time.Second, "the shard back in the ring", func() bool { return !rr.Ejected(1) })

	mu.Lock()
	evs := append([]shard.NodeEvent(nil), events...)
	mu.Unlock()
	ejected, restored := 0, 0
	last := shard.NodeRestored
	for _, ev := range evs {
		switch ev.Kind {
		case shard.NodeEjected, shard.NodeRestored:
			assert.Equal(t, flapper.Addr, ev.Node.Addr, "%v", ev.Kind)
			assert.NotEqual(t, last, ev.Kind, "ejections and restores alternate")
			last = ev.Kind
			if ev.Kind == shard.NodeEjected {
				ejected++
			} else {
				restored++
			}
		case shard.NodeDown:
			assert.Equal(t, flapper.Addr, ev.Node.Addr)
			assert.Error(t, ev.Err, "a NodeDown carries its cause")
		}
	}
	t.Logf("%d pipelines, %d ejections, %d restores, %d failures on other shards (first: %v)",
		rounds.Load(), ejected, restored, otherFailures.Load(), firstFailure.Load())
	assert.Positive(t, ejected)
	assert.LessOrEqual(t, ejected, stops+1, "at most one ejection per stop")
	assert.Equal(t, ejected, restored)
	assert.Zero(t, otherFailures.Load(), "the other shards' keys never fail")

	var now int
	deadline := time.Now().Add(10 * time.Second)
	for now = runtime.NumGoroutine(); now > base && time.Now().Before(deadline); now = runtime.NumGoroutine() {
		time.Sleep(20 * time.Millisecond)
	}
	assert.LessOrEqual(t, now, base, "goroutines before the flapping: %d, after: %d", base, now)
}

// TestReview14AutoEjectSentinelShardFailover: with auto-eject, a
// Sentinel shard whose master dies is taken out of the ring (its keys
// are written on the other shards meanwhile) and put back once the
// Sentinels promoted its replica: its keys are then written on the new
// master, and the NodeEjected and NodeRestored name that shard.
func TestReview14AutoEjectSentinelShardFailover(t *testing.T) {
	set := startSentinelSet(t)
	cfg := sentinelConfig(set)
	cfg.Health.AutoEject = true
	var mu sync.Mutex
	var events []shard.NodeEvent
	cfg.Hooks = &shard.Hooks{NodeState: func(ev shard.NodeEvent) {
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
	}}
	c := newClient(t, cfg)
	rr := c.Router().(*shard.RingRouter)
	ctx := context.Background()
	const victim = 1
	victimNode := rr.Nodes()[victim]
	var key string
	for i := 0; key == ""; i++ {
		k := fmt.Sprintf("se:%d", i)
		if n, err := rr.Route(k); err == nil && n == victimNode {
			key = k
		}
	}
	master, err := set.Master(victim)
	require.NoError(t, err)
	replica, err := set.Replica(victim)
	require.NoError(t, err)
	require.NoError(t, master.Kill())

	waitFor(t, 20*time.Second, "the shard to be ejected", func() bool { return rr.Ejected(victim) })
	_, err = c.Do(ctx, "SET", key, "while-out")
	require.NoError(t, err, "the dead shard's key is served by another shard")
	waitFor(t, 60*time.Second, "the shard to be restored on its new master", func() bool { return !rr.Ejected(victim) })
	waitFor(t, 20*time.Second, "a write through the client to reach the promoted replica", func() bool {
		if _, err := c.Do(ctx, "SET", key, "after"); err != nil {
			return false
		}
		v, err := replica.Do("GET", key)
		return err == nil && v == "after"
	})
	mu.Lock()
	defer mu.Unlock()
	kinds := map[shard.NodeEventKind]int{}
	for _, ev := range events {
		if ev.Kind == shard.NodeEjected || ev.Kind == shard.NodeRestored {
			assert.Equal(t, victimNode, ev.Node, "%v", ev.Kind)
			kinds[ev.Kind]++
		}
	}
	assert.Equal(t, 1, kinds[shard.NodeEjected])
	assert.Equal(t, 1, kinds[shard.NodeRestored])
}

// TestReview14PubSubAcrossEjectionAndRestore: channels and a pattern
// subscribed through the client, with messages published through it
// without pause while a shard is killed, ejected, restarted on its port
// and restored: no message is delivered twice nor out of order, and
// every channel delivers again after the restore.
func TestReview14PubSubAcrossEjectionAndRestore(t *testing.T) {
	c, rr, servers := autoEjectRing(t)
	ctx := context.Background()
	const n = 24
	var names []string
	var channels []string
	for i := range n {
		channels = append(channels, fmt.Sprintf("ps:%d", i))
		names = append(names, fmt.Sprintf("ps:%d", i), fmt.Sprintf("pp:%d", i))
	}
	onVictim := 0
	for _, ch := range names {
		if node, err := rr.Route(ch); err == nil && node.Addr == servers[1].Addr {
			onVictim++
		}
	}
	require.Positive(t, onVictim, "some channels are on the shard that dies")
	sub, err := c.NewSubscription(shard.SubscriptionOptions{})
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, sub.Subscribe(ctx, channels...))
	require.NoError(t, sub.PSubscribe(ctx, "pp:*"))

	var mu sync.Mutex
	lastSeq := map[string]int{}
	var problems []string
	recvDone := make(chan struct{})
	rctx, rcancel := context.WithCancel(ctx)
	go func() {
		defer close(recvDone)
		for {
			v, err := sub.Receive(rctx)
			if err != nil {
				return
			}
			var ch string
			var data []byte
			switch m := v.(type) {
			case redis.Message:
				ch, data = m.Channel, m.Data
				if m.Pattern != "" {
					ch = "pattern " + ch
				}
			default:
				continue
			}
			var seq int
			if _, err := fmt.Sscan(string(data), &seq); err != nil {
				continue
			}
			mu.Lock()
			if last, ok := lastSeq[ch]; ok && seq <= last {
				problems = append(problems, fmt.Sprintf("%s: %d after %d", ch, seq, last))
			}
			lastSeq[ch] = seq
			mu.Unlock()
		}
	}()
	var seq atomic.Int64
	stop := make(chan struct{})
	pubDone := make(chan struct{})
	go func() {
		defer close(pubDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			s := seq.Add(1)
			for _, ch := range names {
				_, _ = c.Do(ctx, "PUBLISH", ch, s)
			}
		}
	}()
	// Every name delivers a message published from now on.
	allAfter := func(what string) {
		t.Helper()
		from := int(seq.Load())
		waitFor(t, 30*time.Second, what, func() bool {
			mu.Lock()
			defer mu.Unlock()
			for _, ch := range names {
				if strings.HasPrefix(ch, "pp:") {
					ch = "pattern " + ch
				}
				if lastSeq[ch] <= from {
					return false
				}
			}
			return true
		})
	}
	allAfter("every name to deliver")
	require.NoError(t, servers[1].Kill())
	waitFor(t, 20*time.Second, "the ejection", func() bool { return rr.Ejected(1) })
	allAfter("every name to deliver while the shard is out")
	require.NoError(t, servers[1].Restart())
	waitFor(t, 20*time.Second, "the restore", func() bool { return !rr.Ejected(1) })
	allAfter("every name to deliver once the shard is back")
	close(stop)
	<-pubDone
	rcancel()
	<-recvDone
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d rounds published", seq.Load())
	assert.Empty(t, problems, "messages delivered twice or out of order")
}

// TestReview14ConnTxRefusedAfterItsKeyMoved: a Conn's transaction that
// WATCHed its key on the shard standing in for an ejected one, whose
// owner is restored before EXEC, is refused (an error matching
// ErrTxAborted, as when a watched key changed) instead of writing on the
// stand-in, where no later read looks.
func TestReview14ConnTxRefusedAfterItsKeyMoved(t *testing.T) {
	c, rr, servers := autoEjectRing(t)
	owner := servers[1]
	key := keysByShard(t, c, 1)[owner.Addr][0]

	require.NoError(t, owner.Kill())
	waitFor(t, 20*time.Second, "the dead shard to be ejected", func() bool { return rr.Ejected(1) })
	conn := c.Conn()
	defer conn.Close()
	_, err := conn.Do("WATCH", key)
	require.NoError(t, err)
	_, err = conn.Do("GET", key)
	require.NoError(t, err)
	require.NoError(t, owner.Restart())
	waitFor(t, 20*time.Second, "the shard to be restored", func() bool { return !rr.Ejected(1) })
	require.NoError(t, conn.Send("MULTI"))
	require.NoError(t, conn.Send("SET", key, "conn-tx"))
	reply, err := conn.Do("EXEC")
	if err == nil {
		got, gerr := owner.Do("GET", key)
		require.NoError(t, gerr)
		assert.Equal(t, "conn-tx", got, "EXEC answered %v: the write is on the key's owner", reply)
	} else {
		assert.ErrorIs(t, err, shard.ErrTxAborted)
	}
	// The connection serves the key on its owner afterwards.
	_, err = conn.Do("SET", key, "after")
	require.NoError(t, err)
	got, err := owner.Do("GET", key)
	require.NoError(t, err)
	assert.Equal(t, "after", got)
}

// TestReview14KeyspaceAcrossEjectionAndRestore: keyspace events follow
// the keys through an ejection and a restore: a write of the dead shard's
// key is reported by the shard standing in for it, and once the shard is
// restarted (its notify-keyspace-events lost with the process) and back
// in the ring, by the shard itself.
func TestReview14KeyspaceAcrossEjectionAndRestore(t *testing.T) {
	c, rr, servers := autoEjectRing(t)
	owner := servers[1]
	key := keysByShard(t, c, 1)[owner.Addr][0]
	ctx := context.Background()
	sub, err := c.SubscribeKeyspace(ctx, shard.KeyspaceOptions{Enable: "E$", Patterns: []string{"__keyevent@*__:set"}})
	require.NoError(t, err)
	defer sub.Close()

	// seen writes value to key through the client until a set event for
	// key arrives after the write.
	seen := func(what, value string) {
		t.Helper()
		for { // drop the events of earlier writes
			rctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			_, err := sub.Receive(rctx)
			cancel()
			if err != nil {
				break
			}
		}
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := c.Do(ctx, "SET", key, value); err != nil {
				time.Sleep(20 * time.Millisecond)
				continue
			}
			rctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			for {
				v, err := sub.Receive(rctx)
				if err != nil {
					break
				}
				if m, ok := v.(redis.Message); ok && string(m.Data) == key {
					cancel()
					return
				}
			}
			cancel()
		}
		t.Fatalf("no set event for %s %s", key, what)
	}
	seen("at the start", "a")
	require.NoError(t, owner.Kill())
	waitFor(t, 20*time.Second, "the ejection", func() bool { return rr.Ejected(1) })
	seen("while its shard is out", "b")
	require.NoError(t, owner.Restart())
	waitFor(t, 20*time.Second, "the restore", func() bool { return !rr.Ejected(1) })
	seen("once its shard is back", "c")
	got, err := owner.Do("GET", key)
	require.NoError(t, err)
	assert.Equal(t, "c", got)
}

// TestReview14StartMigrationRefusesAutoEjectInTo: a target topology that
// asks for auto-eject is refused by StartMigration, as Config.Migration
// refuses it in New, instead of migrating with the setting silently left
// off.
func TestReview14StartMigrationRefusesAutoEjectInTo(t *testing.T) {
	c, servers := startRing(t, 2)
	more := redistest.StartNTB(t, 1, redistest.Options{})
	to := ringConfig(append(append([]*redistest.Server(nil), servers...), more...))
	to.Health.AutoEject = true
	err := c.StartMigration(context.Background(), to)
	require.Error(t, err)
	assert.ErrorIs(t, err, shard.ErrMigration)
	assert.Contains(t, err.Error(), "auto-eject")
	_, on := c.Migration()
	assert.False(t, on, "no migration is on")
}

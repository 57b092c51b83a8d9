package shard_test

import (
	"context"
	"fmt"
	"math/rand"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
)

// The stress tests below race reads of moving keys, answered at their old
// owner (sent alone when their reply shows the key: GET, TTL, HGETALL,
// LLEN, ...), against blind overwrites, read-modify-writes, deletes and
// expiry changes from two clients (two processes), while the mover moves
// the keys, forward and then back after a rollback. Each key has one
// writer at a time, whose writes are acknowledged one after the other;
// a reader checks what it reads against the writes that had been
// acknowledged before its read began and those that had begun before it
// returned:
//
//   - a value is never older than the last write acknowledged before the
//     read began, never newer than the last write begun before it
//     returned, and never older than a value the same reader read before;
//   - a key that exists throughout (no DEL on it) never reads as missing
//     (GET nil, TTL -2, HLEN 0, ...), and one with an expiry throughout
//     never reads as having none;
//   - with no write of the key in flight during the read, the read
//     returns exactly the acknowledged state.

// aloneKind is the kind of a key under stress.
type aloneKind int

const (
	kindString aloneKind = iota // counter, never deleted: SET, SETEX, SET PX, INCR, EXPIRE, PERSIST
	kindDel                     // counter that is deleted and set again: SET, SET EX, DEL
	kindHash                    // field f counts: HINCRBY, HSET, EXPIRE
	kindList                    // length counts: LPUSH, RPUSH
	kindSet                     // cardinality counts: SADD
	kindCount
)

// aloneState is a key's state after a write: its counter, whether it
// exists and whether it has an expiry.
type aloneState struct {
	val     int64
	deleted bool
	ttl     bool
}

// aloneKey is one key under stress and the history its writer publishes.
type aloneKey struct {
	name string
	kind aloneKind

	mu         sync.Mutex
	startedSeq int64 // writes begun
	startedMax int64 // highest counter a begun write sets
	ackedSeq   int64 // writes acknowledged
	acked      aloneState
}

func (k *aloneKey) snapshot() (seq int64, st aloneState) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.ackedSeq, k.acked
}

func (k *aloneKey) started() (seq, maxVal int64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.startedSeq, k.startedMax
}

// aloneFailures collects what the workers found, for the test goroutine.
type aloneFailures struct {
	mu   sync.Mutex
	n    int
	msgs []string
}

func (f *aloneFailures) add(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	if len(f.msgs) < 30 {
		f.msgs = append(f.msgs, fmt.Sprintf(format, args...))
	}
}

// aloneStress is one run: keys, two migrating clients, and a gate that
// the switch of a rollback closes while it turns both clients around.
type aloneStress struct {
	keys    []*aloneKey
	clients [2]*shard.Client
	gate    sync.RWMutex
	fail    aloneFailures
	reads   atomic.Int64
	writes  atomic.Int64
	// window is the first of the keys the workers use at the moment, a
	// few at a time: it advances through the keys, so that the workers
	// keep meeting keys that sit at their old owner, touched by no one
	// yet.
	window atomic.Int64
}

// aloneWindow is how many keys the workers use at a time.
const aloneWindow = 16

// pick returns a key of the window for which i%mod == rem.
func (s *aloneStress) pick(rnd *rand.Rand, mod, rem int) *aloneKey {
	start := int(s.window.Load())
	for {
		i := start + rnd.Intn(aloneWindow)
		if i >= len(s.keys) {
			i = len(s.keys) - 1 - rnd.Intn(aloneWindow)
		}
		if i%mod == rem {
			return s.keys[i]
		}
	}
}

// write runs one random write of k and publishes it.
func (s *aloneStress) write(ctx context.Context, rnd *rand.Rand, k *aloneKey) {
	c := s.clients[rnd.Intn(2)]
	k.mu.Lock()
	cur := k.acked
	k.mu.Unlock()
	next := cur
	var args []any
	switch k.kind {
	case kindString:
		next.val = cur.val + 1
		switch rnd.Intn(6) {
		case 0:
			args, next.ttl = []any{"SET", k.name, next.val}, false
		case 1:
			args, next.ttl = []any{"SETEX", k.name, 100000, next.val}, true
		case 2:
			args, next.ttl = []any{"SET", k.name, next.val, "PX", 100000000}, true
		case 3:
			args = []any{"INCR", k.name}
		case 4:
			next.val = cur.val
			args, next.ttl = []any{"EXPIRE", k.name, 100000}, true
		default:
			next.val = cur.val
			args, next.ttl = []any{"PERSIST", k.name}, false
		}
	case kindDel:
		next.val = cur.val + 1
		switch {
		case !cur.deleted && rnd.Intn(2) == 0:
			next.val = cur.val
			args, next.deleted, next.ttl = []any{"DEL", k.name}, true, false
		case rnd.Intn(2) == 0:
			args, next.deleted, next.ttl = []any{"SET", k.name, next.val}, false, false
		default:
			args, next.deleted, next.ttl = []any{"SET", k.name, next.val, "EX", 100000}, false, true
		}
	case kindHash:
		next.val = cur.val + 1
		switch rnd.Intn(3) {
		case 0:
			args = []any{"HINCRBY", k.name, "f", 1}
		case 1:
			args = []any{"HSET", k.name, "f", next.val}
		default:
			next.val = cur.val
			args, next.ttl = []any{"EXPIRE", k.name, 100000}, true
		}
	case kindList:
		next.val = cur.val + 1
		if rnd.Intn(2) == 0 {
			args = []any{"LPUSH", k.name, next.val}
		} else {
			args = []any{"RPUSH", k.name, next.val}
		}
	case kindSet:
		next.val = cur.val + 1
		args = []any{"SADD", k.name, next.val}
	}
	k.mu.Lock()
	k.startedSeq++
	if next.val > k.startedMax {
		k.startedMax = next.val
	}
	k.mu.Unlock()
	reply, err := c.Do(ctx, args[0].(string), args[1:]...)
	if err != nil {
		// The write's outcome is unknown: the checks cannot go on for
		// this key, and nothing in this test should fail a write.
		s.fail.add("%v: %v", args, err)
		return
	}
	if args[0] == "INCR" || args[0] == "HINCRBY" {
		if n, _ := reply.(int64); n != next.val {
			s.fail.add("%v answered %v, want %d", args, reply, next.val)
		}
	}
	s.writes.Add(1)
	k.mu.Lock()
	k.ackedSeq++
	k.acked = next
	k.mu.Unlock()
}

// aloneRead is one read of a key and what its reply says: the counter
// (val, when it shows one), whether the key is missing, and its expiry
// (for TTL and PTTL).
type aloneRead struct {
	cmd string
	// decode returns the counter (-1 when the reply shows none), whether
	// the key is missing, and for TTL/PTTL whether it has an expiry.
	decode func(reply any) (val int64, missing, ttl bool, err error)
}

func aloneReadsOf(kind aloneKind) []aloneRead {
	intReply := func(reply any) (int64, error) { return redis.Int64(reply, nil) }
	getRead := aloneRead{"GET", func(reply any) (int64, bool, bool, error) {
		if reply == nil {
			return -1, true, false, nil
		}
		n, err := intReply(reply)
		return n, false, false, err
	}}
	ttlRead := func(cmd string) aloneRead {
		return aloneRead{cmd, func(reply any) (int64, bool, bool, error) {
			n, err := intReply(reply)
			return -1, n == -2, n >= 0, err
		}}
	}
	existsRead := aloneRead{"EXISTS", func(reply any) (int64, bool, bool, error) {
		n, err := intReply(reply)
		return -1, n == 0, false, err
	}}
	typeRead := aloneRead{"TYPE", func(reply any) (int64, bool, bool, error) {
		s, err := redis.String(reply, nil)
		return -1, s == "none", false, err
	}}
	countRead := func(cmd string) aloneRead {
		return aloneRead{cmd, func(reply any) (int64, bool, bool, error) {
			n, err := intReply(reply)
			return n, n == 0, false, err
		}}
	}
	common := []aloneRead{ttlRead("TTL"), ttlRead("PTTL"), existsRead, typeRead}
	switch kind {
	case kindString, kindDel:
		return append(common, getRead)
	case kindHash:
		return append(common, aloneRead{"HLEN", func(reply any) (int64, bool, bool, error) {
			n, err := intReply(reply)
			return -1, n == 0, false, err
		}}, aloneRead{"HGETALL", func(reply any) (int64, bool, bool, error) {
			m, err := redis.StringMap(reply, nil)
			if err != nil || len(m) == 0 {
				return -1, len(m) == 0, false, err
			}
			n, err := strconv.ParseInt(m["f"], 10, 64)
			return n, false, false, err
		}})
	case kindList:
		return append(common, countRead("LLEN"))
	default:
		return append(common, countRead("SCARD"), aloneRead{"SMEMBERS", func(reply any) (int64, bool, bool, error) {
			vs, err := redis.Values(reply, nil)
			return int64(len(vs)), len(vs) == 0, false, err
		}})
	}
}

// read runs one random read of k (alone, or two in a pipeline) and checks
// it; last holds the counters this reader saw before, by key.
func (s *aloneStress) read(ctx context.Context, rnd *rand.Rand, c *shard.Client, k *aloneKey, last map[*aloneKey]int64) {
	reads := aloneReadsOf(k.kind)
	rd := reads[rnd.Intn(len(reads))]
	beforeSeq, before := k.snapshot()
	var reply any
	var err error
	if rnd.Intn(4) == 0 {
		// Two reads of the key in one pipeline: both sent to the old
		// owner on a pooled connection; the second must not go back.
		p := c.Pipeline()
		p.Send(rd.cmd, k.name)
		p.Send(rd.cmd, k.name)
		var res []shard.Result
		res, err = p.Exec(ctx)
		if err == nil && len(res) == 2 {
			for _, r := range res {
				if r.Err != nil {
					err = r.Err
				}
			}
			if err == nil {
				s.check(k, rd, res[0].Reply, before, beforeSeq, last, "pipeline 1/2")
				reply = res[1].Reply
			}
		}
	} else {
		reply, err = c.Do(ctx, rd.cmd, k.name)
	}
	if err != nil {
		s.fail.add("%s %s: %v", rd.cmd, k.name, err)
		return
	}
	s.check(k, rd, reply, before, beforeSeq, last, "")
}

func (s *aloneStress) check(k *aloneKey, rd aloneRead, reply any, before aloneState, beforeSeq int64, last map[*aloneKey]int64, where string) {
	s.reads.Add(1)
	afterSeq, maxVal := k.started()
	val, missing, ttl, err := rd.decode(reply)
	if err != nil {
		s.fail.add("%s %s%s: reply %#v: %v", rd.cmd, k.name, where, reply, err)
		return
	}
	quiet := afterSeq == beforeSeq // no write of k overlapped the read
	switch {
	case missing && k.kind != kindDel:
		s.fail.add("%s %s%s answered %#v: a key that always exists read as missing (state %+v, writes in flight: %v)", rd.cmd, k.name, where, reply, before, !quiet)
		return
	case quiet && missing != before.deleted:
		s.fail.add("%s %s%s answered %#v with no write in flight; acknowledged state %+v", rd.cmd, k.name, where, reply, before)
		return
	}
	if (rd.cmd == "TTL" || rd.cmd == "PTTL") && !missing {
		if quiet && ttl != before.ttl {
			s.fail.add("%s %s%s answered %#v with no write in flight; acknowledged state %+v", rd.cmd, k.name, where, reply, before)
		}
		if k.kind == kindList || k.kind == kindSet {
			if ttl {
				s.fail.add("%s %s%s answered %#v: a key never given an expiry has one", rd.cmd, k.name, where, reply)
			}
		}
	}
	if val < 0 || missing {
		return
	}
	switch {
	case val > maxVal:
		s.fail.add("%s %s%s read %d, beyond any write begun (%d)", rd.cmd, k.name, where, val, maxVal)
	case !before.deleted && val < before.val:
		s.fail.add("%s %s%s read %d, older than the write acknowledged before the read began (%d)", rd.cmd, k.name, where, val, before.val)
	case val < last[k]:
		s.fail.add("%s %s%s read %d after the same reader read %d", rd.cmd, k.name, where, val, last[k])
	case quiet && val != before.val:
		s.fail.add("%s %s%s read %d with no write in flight; acknowledged %d", rd.cmd, k.name, where, val, before.val)
	}
	if val > last[k] {
		last[k] = val
	}
}

// create writes each key's first state with c (routing by the old
// topology).
func (s *aloneStress) create(ctx context.Context, t *testing.T, c *shard.Client) {
	t.Helper()
	for _, k := range s.keys {
		var err error
		switch k.kind {
		case kindString, kindDel:
			_, err = c.Do(ctx, "SET", k.name, 1)
		case kindHash:
			_, err = c.Do(ctx, "HSET", k.name, "f", 1)
		case kindList:
			_, err = c.Do(ctx, "RPUSH", k.name, 1)
		case kindSet:
			_, err = c.Do(ctx, "SADD", k.name, 1)
		}
		require.NoError(t, err)
		k.acked = aloneState{val: 1}
		k.startedMax = 1
	}
}

// run starts the writers and readers, with the window at the first keys
// and advancing one key per step; stop ends them and waits; end is closed
// when the window has reached the last keys.
func (s *aloneStress) run(ctx context.Context, writers, readers int, step time.Duration) (stop func(), end <-chan struct{}) {
	done := make(chan struct{})
	ended := make(chan struct{})
	var wg sync.WaitGroup
	s.window.Store(0)
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(step)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			if s.window.Add(1) >= int64(len(s.keys)-aloneWindow) {
				close(ended)
				return
			}
		}
	}()
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rnd := rand.New(rand.NewSource(int64(w) + 1))
			for {
				select {
				case <-done:
					return
				default:
				}
				s.gate.RLock()
				s.write(ctx, rnd, s.pick(rnd, writers, w))
				s.gate.RUnlock()
			}
		}(w)
	}
	for r := 0; r < readers; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			rnd := rand.New(rand.NewSource(int64(r) + 1000))
			c := s.clients[r%2]
			last := map[*aloneKey]int64{}
			for {
				select {
				case <-done:
					return
				default:
				}
				s.gate.RLock()
				s.read(ctx, rnd, c, s.pick(rnd, 1, 0), last)
				s.gate.RUnlock()
			}
		}(r)
	}
	return func() {
		close(done)
		wg.Wait()
	}, ended
}

// verify checks every key's final state, read with a plain client of the
// topology the keys ended in.
func (s *aloneStress) verify(ctx context.Context, t *testing.T, c *shard.Client) {
	t.Helper()
	for _, k := range s.keys {
		var val int64
		var err error
		switch k.kind {
		case kindString, kindDel:
			var reply any
			reply, err = c.Do(ctx, "GET", k.name)
			if reply == nil && err == nil {
				val = -1
			} else {
				val, err = redis.Int64(reply, err)
			}
		case kindHash:
			val, err = redis.Int64(c.Do(ctx, "HGET", k.name, "f"))
		case kindList:
			val, err = redis.Int64(c.Do(ctx, "LLEN", k.name))
		case kindSet:
			val, err = redis.Int64(c.Do(ctx, "SCARD", k.name))
		}
		require.NoError(t, err, k.name)
		want := k.acked.val
		if k.acked.deleted {
			want = -1
		}
		require.Equal(t, want, val, "final state of %s", k.name)
	}
}

func (s *aloneStress) report(t *testing.T, phase string) {
	t.Helper()
	t.Logf("%s: %d reads, %d writes", phase, s.reads.Load(), s.writes.Load())
	s.fail.mu.Lock()
	defer s.fail.mu.Unlock()
	for _, m := range s.fail.msgs {
		t.Error(m)
	}
	if s.fail.n > 0 {
		t.Fatalf("%s: %d failures", phase, s.fail.n)
	}
}

// aloneKeys gives the first n*kindCount of names a kind each, in turn.
func aloneKeys(names []string, n int) []*aloneKey {
	var keys []*aloneKey
	for i := 0; i < n*int(kindCount) && i < len(names); i++ {
		keys = append(keys, &aloneKey{name: names[i], kind: aloneKind(i % int(kindCount))})
	}
	return keys
}

// moveWhileStressed runs the mover from one topology to the other while s
// runs (with DUMP/RESTORE when dump is set; through the fence, the
// clients checked, when fence is set), after before (nil: nothing) has
// run under the load, and lets s run on until the workers' window has
// gone through every key.
func moveWhileStressed(ctx context.Context, t *testing.T, s *aloneStress, from, to shard.Config, dump, fence bool, before func(), keysPerSecond float64, step time.Duration) {
	t.Helper()
	stop, end := s.run(ctx, 4, 6, step)
	if before != nil {
		before()
	}
	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: !fence, SkipProbe: true,
		Batch: 10, ScanCount: 20, KeysPerSecond: keysPerSecond, Dump: dump})
	<-end // the workers go through every key, moved by the mover or not
	stop()
	require.NoError(t, err)
	t.Logf("mover: moved %d, busy %d; window at %d of %d keys", rep.Moved, rep.Busy, s.window.Load(), len(s.keys))
	for i, c := range s.clients {
		info, _ := c.Migration()
		t.Logf("client %d: phase %v, old reads %d, moves %d, overwrites %d", i, info.Phase, info.OldReads, info.Moves, info.Overwrites)
	}
}

// rollBack turns both clients around (AbortMigration, then the reverse
// fence, armed here as the reverse mover would arm it), with the
// workers held outside.
func (s *aloneStress) rollBack(ctx context.Context, t *testing.T) {
	t.Helper()
	for _, c := range s.clients {
		require.NoError(t, c.AbortMigration(ctx))
	}
	for _, c := range s.clients {
		require.NoError(t, c.ArmMigration())
	}
}

func TestReview18AloneReadsStressRingGrowAndRollback(t *testing.T) {
	if testing.Short() {
		t.Skip("stress")
	}
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	plainFrom := newClient(t, from)
	const perKind = 240
	s := &aloneStress{keys: aloneKeys(movingKeys(t, from, to, "stress:", perKind*int(kindCount)), perKind)}
	s.create(ctx, t, plainFrom)
	s.clients = [2]*shard.Client{newClient(t, armedConfig(from, to)), newClient(t, armedConfig(from, to))}

	moveWhileStressed(ctx, t, s, from, to, false, false, nil, 100, 10*time.Millisecond)
	s.report(t, "forward")
	s.verify(ctx, t, newClient(t, to))

	s.rollBack(ctx, t)
	moveWhileStressed(ctx, t, s, to, from, true, false, nil, 100, 10*time.Millisecond)
	s.report(t, "rollback")
	s.verify(ctx, t, plainFrom)
}

func TestReview18AloneReadsStressRingIntoClusterAndBack(t *testing.T) {
	if testing.Short() {
		t.Skip("stress")
	}
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	from, to := ringConfig(servers), clusterConfig(rc.Seeds()...)
	to.Pool = from.Pool
	plainFrom := newClient(t, from)
	const perKind = 200
	names := make([]string, 0, perKind*int(kindCount))
	for i := 0; i < cap(names); i++ {
		names = append(names, fmt.Sprintf("cstress:%d", i))
	}
	s := &aloneStress{keys: aloneKeys(names, perKind)}
	s.create(ctx, t, plainFrom)
	s.clients = [2]*shard.Client{newClient(t, armedConfig(from, to)), newClient(t, armedConfig(from, to))}

	moveWhileStressed(ctx, t, s, from, to, false, false, nil, 80, 12*time.Millisecond)
	s.report(t, "into the cluster")
	s.verify(ctx, t, newClient(t, to))

	// The rollback, in processes started on the reverse migration (a
	// cluster client does not turn around at run time): the old owner of
	// every key is a cluster master.
	for _, c := range s.clients {
		require.NoError(t, c.Close())
	}
	s.clients = [2]*shard.Client{newClient(t, armedConfig(to, from)), newClient(t, armedConfig(to, from))}
	moveWhileStressed(ctx, t, s, to, from, false, false, nil, 80, 12*time.Millisecond)
	s.report(t, "back from the cluster")
	s.verify(ctx, t, plainFrom)
}

// TestReview18AloneReadsStressThroughTheFences: as the ring test above,
// with the clients walked through the fence by the mover itself (they
// start waiting), and the rollback begun under load: each client turns
// around at its own moment while the workers run, and the reverse mover
// raises the reverse fence.
func TestReview18AloneReadsStressThroughTheFences(t *testing.T) {
	if testing.Short() {
		t.Skip("stress")
	}
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	from.Pool.ClientName, to.Pool.ClientName = shard.AutoClientName, shard.AutoClientName
	const perKind = 200
	s := &aloneStress{keys: aloneKeys(movingKeys(t, from, to, "fstress:", perKind*int(kindCount)), perKind)}
	plainFrom := newClient(t, from)
	s.create(ctx, t, plainFrom)
	require.NoError(t, plainFrom.Close()) // a process on the old topology alone: the mover would refuse
	waiting := to
	f := from
	waiting.Migration = &shard.Migration{From: &f}
	s.clients = [2]*shard.Client{newClient(t, waiting), newClient(t, waiting)}

	moveWhileStressed(ctx, t, s, from, to, false, true, nil, 100, 10*time.Millisecond)
	s.report(t, "forward")
	plainTo := newClient(t, to)
	s.verify(ctx, t, plainTo)
	require.NoError(t, plainTo.Close()) // a process on the new topology alone: the reverse mover would refuse

	turn := func() {
		for _, c := range s.clients {
			time.Sleep(50 * time.Millisecond) // each at its own moment, under load: not a wait for a condition
			if err := c.AbortMigration(ctx); err != nil {
				s.fail.add("AbortMigration: %v", err)
			}
		}
	}
	moveWhileStressed(ctx, t, s, to, from, false, true, turn, 100, 10*time.Millisecond)
	s.report(t, "rollback")
	s.verify(ctx, t, newClient(t, from))
}

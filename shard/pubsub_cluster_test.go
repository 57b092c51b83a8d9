package shard_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// arrivals records when each channel's messages arrived.
type arrivals struct {
	mu   sync.Mutex
	at   map[string][]time.Time
	seq  map[string][]int
	errs []error
}

func newArrivals() *arrivals {
	return &arrivals{at: map[string][]time.Time{}, seq: map[string][]int{}}
}

// run receives from sub until ctx ends.
func (a *arrivals) run(ctx context.Context, sub *shard.Subscription) {
	for {
		v, err := sub.Receive(ctx)
		if err != nil {
			if ctx.Err() == nil {
				a.mu.Lock()
				a.errs = append(a.errs, err)
				a.mu.Unlock()
			}
			return
		}
		m, ok := v.(redis.Message)
		if !ok {
			continue
		}
		n, _ := strconv.Atoi(string(m.Data))
		a.mu.Lock()
		a.at[m.Channel] = append(a.at[m.Channel], time.Now())
		a.seq[m.Channel] = append(a.seq[m.Channel], n)
		a.mu.Unlock()
	}
}

// firstAfter returns the first arrival on ch after t (zero when none).
func (a *arrivals) firstAfter(ch string, t time.Time) time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, at := range a.at[ch] {
		if at.After(t) {
			return at
		}
	}
	return time.Time{}
}

// maxGap returns the longest time without a message on ch between from and to.
func (a *arrivals) maxGap(ch string, from, to time.Time) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	last, gap := from, time.Duration(0)
	for _, at := range a.at[ch] {
		if at.Before(from) || at.After(to) {
			continue
		}
		gap = max(gap, at.Sub(last))
		last = at
	}
	return max(gap, to.Sub(last))
}

// channelsOn returns n channel names whose slots the master at addr owns,
// and n whose slots it does not own.
func channelsOn(tbl *cluster.Table, addr, prefix string, n int) (on, off []string) {
	for i := 0; len(on) < n || len(off) < n; i++ {
		name := fmt.Sprintf("%s:%d", prefix, i)
		if tbl.Master(cluster.Slot(name)).Addr == addr {
			if len(on) < n {
				on = append(on, name)
			}
		} else if len(off) < n {
			off = append(off, name)
		}
	}
	return on, off
}

// homeOf returns the master that has channel subscribed (classic pub/sub).
func homeOf(t *testing.T, masters []*redistest.Server, channel string) *redistest.Server {
	t.Helper()
	var home *redistest.Server
	for _, m := range masters {
		if numSub(t, m, "NUMSUB", channel) == 1 {
			require.Nil(t, home, "subscribed on two masters")
			home = m
		}
	}
	require.NotNil(t, home, "subscribed on no master")
	return home
}

// startFailoverCluster starts a cluster of three masters with a replica
// each, quick to fail over, and a client on it; it returns the masters
// too.
func startFailoverCluster(t *testing.T) (*redistest.Cluster, *shard.Client, []*redistest.Server) {
	t.Helper()
	// With full coverage required (the default), every master answers
	// CLUSTERDOWN between the master's failure and the promotion, so no
	// channel could be published to: the other masters keep serving here.
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{NodeTimeout: time.Second,
		Args: []string{"--cluster-require-full-coverage", "no"}})
	c := newClient(t, clusterConfig(rc.Seeds()...))
	masters := rc.Masters()
	require.Len(t, masters, 3)
	return rc, c, masters
}

// TestSubscriptionsClusterFailover kills the master that carries a
// classic subscription and owns some of 1,000 shard channels of another,
// with keyspace events subscribed on every master: every kind must come
// back on its own, the shard channels within a second of the promotion,
// while shard channels elsewhere never stop.
func TestSubscriptionsClusterFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster and kills a master")
	}
	rc, c, masters := startFailoverCluster(t)
	ctx := context.Background()

	classic, err := c.Subscribe(ctx, "classic:news")
	require.NoError(t, err)
	defer classic.Close()
	victim := homeOf(t, masters, "classic:news")
	replica, err := rc.ReplicaOf(victim)
	require.NoError(t, err)

	names := make([]string, 1000)
	for i := range names {
		names[i] = fmt.Sprintf("sharded:%d", i)
	}
	ssub, err := c.SSubscribe(ctx, names...)
	require.NoError(t, err)
	defer ssub.Close()
	st := ssub.Stats()
	assert.Equal(t, 1000, st.ShardChannels)
	assert.Equal(t, 3, st.Connections, "one connection per master")

	ks, err := c.SubscribeKeyspace(ctx, shard.KeyspaceOptions{Enable: "KEA", Patterns: []string{"__keyevent@*__:set"}})
	require.NoError(t, err)
	defer ks.Close()
	assert.Equal(t, 3, ks.Stats().Connections, "keyspace events are subscribed on every master")
	// One event from each master's keys, through the one subscription.
	var keys []string
	for _, m := range masters {
		k := fmt.Sprintf("ks:{%s}", m.Addr)
		for i := 0; c.Router().(*shard.ClusterRouter).Table().Master(cluster.Slot(k)).Addr != m.Addr; i++ {
			k = fmt.Sprintf("ks:%d", i)
		}
		keys = append(keys, k)
		_, err := c.Do(ctx, "SET", k, "1")
		require.NoError(t, err)
	}
	seen := map[string]bool{}
	for len(seen) < len(keys) {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		v, err := ks.Receive(rctx)
		cancel()
		require.NoError(t, err, "keyspace events so far: %v", seen)
		if m, ok := v.(redis.Message); ok {
			ev, ok := shard.ParseKeyspaceEvent(m)
			require.True(t, ok, "%+v", m)
			assert.Equal(t, "set", ev.Event)
			seen[ev.Key] = true
		}
	}
	assert.ElementsMatch(t, keys, mapKeys(seen))

	// Every shard channel is reached by SPUBLISH through the client.
	publishAll := func() {
		p := c.Pipeline()
		for _, n := range names {
			p.Send("SPUBLISH", n, "-1")
		}
		res, err := p.Exec(ctx)
		require.NoError(t, err)
		require.Len(t, res, len(names))
		for i, r := range res {
			n, err := redis.Int(r.Reply, r.Err)
			require.NoError(t, err, names[i])
			require.Equal(t, 1, n, "SPUBLISH %s reached %d subscribers", names[i], n)
		}
	}
	publishAll()

	tbl := c.Router().(*shard.ClusterRouter).Table()
	dead, alive := channelsOn(tbl, victim.Addr, "sharded", 20)
	// The probes are among the subscribed names.
	for _, n := range append(dead, alive...) {
		i, err := strconv.Atoi(strings.TrimPrefix(n, "sharded:"))
		require.NoError(t, err)
		require.Less(t, i, len(names))
	}

	rctx, stopReceiving := context.WithCancel(ctx)
	arr := newArrivals()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); arr.run(rctx, ssub) }()
	stopPublishing := make(chan struct{})
	// One publisher per group, so that waiting on the dead master does
	// not slow the others down.
	var sentMu sync.Mutex
	sent := map[string][]int{} // alive channel -> the seqs SPUBLISH delivered to one subscriber
	var sentAt []time.Time     // when a pipeline of the alive group fully succeeded
	for gi, group := range [][]string{alive, dead} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := 0; ; seq++ {
				select {
				case <-stopPublishing:
					return
				case <-time.After(10 * time.Millisecond):
				}
				p := c.Pipeline()
				for _, n := range group {
					p.Send("SPUBLISH", n, seq)
				}
				pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
				res, _ := p.Exec(pctx) // the dead master's channels fail until the promotion
				cancel()
				if gi != 0 || len(res) != len(group) { // only the alive group counts
					continue
				}
				sentMu.Lock()
				ok := 0
				for i, r := range res {
					if n, err := redis.Int(r.Reply, r.Err); err == nil && n == 1 {
						sent[group[i]] = append(sent[group[i]], seq)
						ok++
					}
				}
				if ok == len(res) {
					sentAt = append(sentAt, time.Now())
				}
				sentMu.Unlock()
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)

	killed := time.Now()
	require.NoError(t, victim.Kill())
	promoted := waitPromoted(t, replica, 15*time.Second, 5*time.Millisecond)
	waitFor(t, 10*time.Second, "the dead master's channels to resume", func() bool {
		for _, n := range dead {
			if arr.firstAfter(n, promoted).IsZero() {
				return false
			}
		}
		return true
	})
	time.Sleep(300 * time.Millisecond)
	end := time.Now()
	close(stopPublishing)
	time.Sleep(100 * time.Millisecond)
	stopReceiving()
	wg.Wait()
	require.Empty(t, arr.errs)

	var worstResume time.Duration
	for _, n := range dead {
		worstResume = max(worstResume, arr.firstAfter(n, promoted).Sub(promoted))
	}
	var worstAlive time.Duration
	for _, n := range alive {
		worstAlive = max(worstAlive, arr.maxGap(n, killed.Add(-100*time.Millisecond), end))
	}
	// The publisher's own longest pause on those channels (a loaded
	// machine stalls it too): the subscriber may add little to it.
	var pubGap time.Duration
	last := killed.Add(-100 * time.Millisecond)
	for _, at := range sentAt {
		if at.After(last) && at.Before(end) {
			pubGap = max(pubGap, at.Sub(last))
			last = at
		}
	}
	t.Logf("promotion %v after the kill; shard channels of the dead master resumed %v after the promotion; longest gap on the other masters' channels %v (publisher's own %v)",
		promoted.Sub(killed).Round(time.Millisecond), worstResume.Round(time.Millisecond), worstAlive.Round(time.Millisecond), pubGap.Round(time.Millisecond))
	assert.Less(t, worstResume, time.Second, "resumed within 1s of the promotion")
	assert.Less(t, worstAlive, pubGap+300*time.Millisecond, "the other channels never stopped")
	// Nothing the other masters accepted was lost.
	for _, n := range alive {
		require.NotEmpty(t, sent[n], n)
		arr.mu.Lock()
		got := map[int]bool{}
		for _, q := range arr.seq[n] {
			got[q] = true
		}
		arr.mu.Unlock()
		for _, q := range sent[n] {
			require.True(t, got[q], "message %d on %s, accepted by its master, never arrived", q, n)
		}
	}
	// Per channel, in order.
	for ch, seq := range arr.seq {
		for i := 1; i < len(seq); i++ {
			require.Less(t, seq[i-1], seq[i], "order on %s", ch)
		}
	}
	// Every one of the 1,000 channels is back.
	publishAll()

	// The classic subscription moved to a live master.
	pubConn, err := redis.Dial("tcp", replica.Addr)
	require.NoError(t, err)
	defer pubConn.Close()
	waitFor(t, 5*time.Second, "the classic subscription to move", func() bool {
		_, err := pubConn.Do("PUBLISH", "classic:news", "after")
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		for {
			v, err := classic.Receive(ctx)
			if err != nil {
				return false
			}
			if m, ok := v.(redis.Message); ok && string(m.Data) == "after" {
				return true
			}
		}
	})
	assert.Positive(t, classic.Stats().Lost)

	// Keyspace events come from the promoted replica too.
	key := dead[0] // a key in the promoted replica's slots
	waitFor(t, 5*time.Second, "a keyspace event from the promoted replica", func() bool {
		_, err := c.Do(ctx, "SET", key, "v")
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		for {
			v, err := ks.Receive(ctx)
			if err != nil {
				return false
			}
			if m, ok := v.(redis.Message); ok {
				if ev, ok := shard.ParseKeyspaceEvent(m); ok && ev.Key == key && ev.Event == "set" {
					return true
				}
			}
		}
	})
}

func mapKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

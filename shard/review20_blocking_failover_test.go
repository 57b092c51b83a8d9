package shard_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// blockedClients returns the blocked_clients count of s's INFO clients.
func blockedClients(s *redistest.Server) int {
	info, err := s.Do("INFO", "clients")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "blocked_clients:"); ok {
			n, err := strconv.Atoi(v)
			if err == nil {
				return n
			}
		}
	}
	return -1
}

// A BLPOP blocked on a master that a failover demotes is unblocked by the
// server with UNBLOCKED: it popped nothing, and the slot's new master can
// serve it. The caller gets the element pushed there after the failover,
// not the server's UNBLOCKED.
func TestReview20BlockingSurvivesFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{})
	c := newClient(t, clusterConfig(rc.Seeds()...))
	m := rc.Masters()[0]
	rep, err := rc.ReplicaOf(m)
	require.NoError(t, err)
	key, slot := keyOnMaster(t, rc, m, "r20blfo")

	type result struct {
		v   []string
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := redis.Strings(c.Do(ctx, "BLPOP", key, 30))
		done <- result{v, err}
	}()
	waitFor(t, 10*time.Second, "the BLPOP blocked on the master", func() bool { return blockedClients(m) >= 1 })

	failOverSlot(t, rc, rep, slot)
	// Pushed at the new master once the BLPOP waits there again, or
	// earlier: either way the BLPOP pops it.
	awaitBlockedAgain(t, rep, 10*time.Second, done, func(r result) {
		require.NoError(t, r.err, "the BLPOP unblocked by the failover")
		t.Fatalf("BLPOP returned %q before anything was pushed", r.v)
	})
	_, err = direct(t, rep.Addr).Do("RPUSH", key, "after")
	require.NoError(t, err)
	select {
	case r := <-done:
		require.NoError(t, r.err, "the BLPOP unblocked by the failover")
		assert.Equal(t, []string{key, "after"}, r.v)
	case <-time.After(40 * time.Second):
		t.Fatal("BLPOP did not return")
	}
}

// A BLPOP blocked on a master whose slot is given to another master is
// redirected by the server (MOVED) and waits on at the new owner, where
// it pops what is pushed there.
func TestReview20BlockingMovedWhileBlocked(t *testing.T) {
	ctx := context.Background()
	rc, c, a, b := clusterAB(t, nil)
	key, slot := emptySlotKeyOnMaster(t, rc, a, "r20blmv")
	type result struct {
		v   []string
		err error
	}
	done := make(chan result, 1)
	before := blockedClients(a)
	go func() {
		v, err := redis.Strings(c.Do(ctx, "BLPOP", key, 20))
		done <- result{v, err}
	}()
	waitFor(t, 10*time.Second, "the BLPOP blocked on the owner", func() bool { return blockedClients(a) > before })
	bBefore := blockedClients(b)
	assignSlot(t, slot, a, b)
	t.Cleanup(func() {
		_, _ = direct(t, b.Addr).Do("DEL", key)
		assignSlot(t, slot, b, a)
	})
	waitFor(t, 10*time.Second, "the BLPOP blocked on the new owner", func() bool { return blockedClients(b) > bBefore })
	_, err := direct(t, b.Addr).Do("RPUSH", key, "there")
	require.NoError(t, err)
	select {
	case r := <-done:
		require.NoError(t, r.err)
		assert.Equal(t, []string{key, "there"}, r.v)
	case <-time.After(30 * time.Second):
		t.Fatal("BLPOP did not return")
	}
}

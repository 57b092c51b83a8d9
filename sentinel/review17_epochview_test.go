package sentinel_test

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/sentinel"
)

// waitUntil polls cond every 20ms until it holds, failing the test after
// 60s with what.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// isolateStale keeps s[0] stale once s[2] is down: s[1] would tell s[0]
// of the failover (its hello messages reach the Sentinels it knows), so
// it forgets them, and s[0] is made to monitor the stale server again.
func isolateStale(t *testing.T, s []*redistest.Server, stale *redistest.Server, name string) {
	t.Helper()
	if _, err := s[1].Do("SENTINEL", "RESET", name); err != nil {
		t.Fatal(err)
	}
	if _, err := s[0].Do("SENTINEL", "REMOVE", name); err != nil {
		t.Fatal(err)
	}
	if _, err := s[0].Do("SENTINEL", "MONITOR", name, "127.0.0.1", strconv.Itoa(stale.Port), "2"); err != nil {
		t.Fatal(err)
	}
	waitNames(t, s[0], name, stale.Port)
}

// A one-to-one tie (one Sentinel down) between a stale Sentinel, at
// config epoch 0, and a current one, whose view moves on to a second
// failover between its GET-MASTER-ADDR-BY-NAME reply and its SENTINEL
// MASTER reply. The current Sentinel's epoch was dropped (it names
// another master than before), and the stale Sentinel's known epoch 0
// then put its server, which still says it is a master, first: the
// client took it, though the only Sentinel that knew more named a newer
// master. A Sentinel's latest view is now its answer.
func TestReview17SentinelViewMovedDuringTieTakesTheLatestView(t *testing.T) {
	set, promoted, stale, name := epochTieSet(t)
	s := set.Sentinels
	var orig *redistest.Server // the master before the first failover
	for _, n := range set.Shards[0].Nodes {
		if n != promoted {
			orig = n
		}
	}
	// The second failover needs the first master to be a replica of the
	// promoted one, with its link up.
	if err := s[2].Kill(); err != nil {
		t.Fatal(err)
	}
	if _, err := orig.Do("REPLICAOF", "127.0.0.1", strconv.Itoa(promoted.Port)); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the first master to replicate the promoted one", func() bool {
		out, err := orig.Do("ROLE")
		return err == nil && strings.HasPrefix(out, "slave\n") && strings.Contains(out, "connected")
	})
	isolateStale(t, s, stale, name)
	waitUntil(t, "s[1] to list the first master as a healthy replica", func() bool {
		conn, err := redis.Dial("tcp", s[1].Addr)
		if err != nil {
			return false
		}
		defer conn.Close()
		reply, err := conn.Do("SENTINEL", "REPLICAS", name)
		if err != nil {
			return false
		}
		reps, err := sentinel.ParseReplicas(reply)
		if err != nil {
			return false
		}
		for _, r := range reps {
			if r.Addr == orig.Addr && r.Healthy() {
				return true
			}
		}
		return false
	})
	if e, err := configEpoch(t, s[0], name); err != nil || e != 0 {
		t.Fatalf("the stale Sentinel's config epoch is %d, %v; want 0", e, err)
	}
	if e, err := configEpoch(t, s[1], name); err != nil || e < 1 {
		t.Fatalf("the current Sentinel's config epoch is %d, %v; want 1 or more", e, err)
	}

	held := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	px := redistest.StartProxy(t, s[1].Addr, redistest.ProxyOptions{OnSend: func(chunk []byte) bool {
		if bytes.Contains(bytes.ToUpper(chunk), []byte("$6\r\nMASTER\r\n")) {
			once.Do(func() {
				close(held)
				<-release
			})
		}
		return true
	}})
	var releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })

	c, err := sentinel.New(name, []string{s[0].Addr, px.Addr, s[2].Addr}, sentinel.Options{ReadTimeout: 90 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		addr, from string
		err        error
	}
	done := make(chan result, 1)
	go func() {
		a, f, err := c.VerifiedMasterAddr(context.Background(), roleMaster)
		done <- result{a, f, err}
	}()
	select {
	case <-held:
	case r := <-done:
		t.Fatalf("VerifiedMasterAddr = %q, %v without asking the config epochs: no tie", r.addr, r.err)
	case <-time.After(60 * time.Second):
		t.Fatal("the config epochs were not asked")
	}
	// s[1] has named the promoted master; it now leads a second
	// failover, back to the first master, at a higher epoch.
	if _, err := s[1].Do("SENTINEL", "FAILOVER", name); err != nil {
		t.Fatal(err)
	}
	// GET-MASTER-ADDR-BY-NAME names the promoted replica from the middle
	// of a failover on, SENTINEL MASTER only once it has ended.
	waitNames(t, s[1], name, orig.Port)
	waitUntil(t, "s[1]'s SENTINEL MASTER to name the first master", func() bool {
		out, err := s[1].Do("SENTINEL", "MASTER", name)
		if err != nil {
			return false
		}
		f := strings.Split(out, "\n")
		for i := 0; i+1 < len(f); i += 2 {
			if strings.TrimSpace(f[i]) == "port" {
				return strings.TrimSpace(f[i+1]) == strconv.Itoa(orig.Port)
			}
		}
		return false
	})
	waitUntil(t, "the first master to say it is a master again", func() bool {
		return roleMaster(context.Background(), orig.Addr) == nil
	})
	if err := roleMaster(context.Background(), stale.Addr); err != nil {
		t.Fatalf("the stale server must still say it is a master: %v", err)
	}
	releaseOnce.Do(func() { close(release) })
	r := <-done
	if r.err != nil || r.addr != orig.Addr {
		t.Errorf("VerifiedMasterAddr = %q from %s, %v; want %s, the latest view of the Sentinel that followed both failovers, not the stale %s (config epoch 0)",
			r.addr, r.from, r.err, orig.Addr, stale.Addr)
	}
}

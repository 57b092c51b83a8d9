package shard_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
)

// acceptNeverAnswer listens on 127.0.0.1 and accepts connections that
// never get a byte back: a Sentinel that hangs. They close when the test
// ends.
func acceptNeverAnswer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// Most of a Sentinel shard's Sentinels accept connections and never
// answer; the real ones name the master. Refresh returns by the caller's
// deadline, however long the query runs, and without a deadline once the
// query has waited the Sentinels' Timeout for the hung ones: the master
// the real Sentinels name is kept.
func TestReview18SentinelRefreshWithHungSentinels(t *testing.T) {
	set := redistest.StartSentinelsTB(t, sentinelSetOptions(1))
	master, err := set.Master(0)
	if err != nil {
		t.Fatal(err)
	}
	cfg := sentinelConfig(set)
	addrs := set.Addrs()
	for range len(addrs) + 1 {
		addrs = append(addrs, acceptNeverAnswer(t))
	}
	cfg.Sentinel.Addrs = addrs
	cfg.Sentinel.Timeout = 2 * time.Second
	cfg.Sentinel.RefreshInterval = -1
	c := newClient(t, cfg)
	if st := c.Stats().Sentinel; len(st) != 1 || st[0].Master != master.Addr {
		t.Fatalf("Sentinel stats %+v: want the master %s", st, master.Addr)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = c.Refresh(ctx)
	if took := time.Since(start); took > 1500*time.Millisecond {
		t.Errorf("Refresh under a 300ms deadline took %v (%v)", took, err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Refresh under a 300ms deadline, the hung Sentinels' replies waited for 2s: %v; want context.DeadlineExceeded", err)
	}

	start = time.Now()
	err = c.Refresh(context.Background())
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("Refresh took %v with a Sentinel Timeout of 2s (%v)", took, err)
	}
	if err != nil {
		t.Errorf("Refresh: %v; want the master the real Sentinels name", err)
	}
	if st := c.Stats().Sentinel; st[0].Master != master.Addr || st[0].Stale {
		t.Errorf("Sentinel stats %+v: want the master %s, not stale", st, master.Addr)
	}
}

//go:build unix

package shard

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardis/shardis/cluster"
)

// movingNode is a byte-level fake of a one-node cluster: it owns every
// slot (CLUSTER SHARDS), answers PING, and answers every other command
// with the error line moved (a MOVED naming an address the client cannot
// use). It listens on a port from fakeNodePorts up.
type movingNode struct {
	ln    net.Listener
	moved string
	wg    sync.WaitGroup
}

func startMovingNode(t *testing.T, moved func(addr string) string) *movingNode {
	t.Helper()
	var ln net.Listener
	for p := fakeNodePorts + 100; p < fakeNodePorts+200 && ln == nil; p++ {
		ln, _ = net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	}
	if ln == nil {
		t.Fatal("no free port for the fake node")
	}
	s := &movingNode{ln: ln}
	s.moved = moved(ln.Addr().String())
	topo := encode(nil, newBigTopology(1, 0, ln.Addr().String()).reply())
	var mu sync.Mutex
	var conns []net.Conn
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			s.wg.Go(func() { s.serve(c, topo) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *movingNode) serve(c net.Conn, topo []byte) {
	serveCommands(c, func(cmd []byte) []byte {
		up := bytes.ToUpper(cmd)
		switch {
		case bytes.Contains(up, []byte("SHARDS")):
			return topo
		case bytes.Contains(up, []byte("PING")):
			return []byte("+PONG\r\n")
		}
		return []byte("-" + s.moved + "\r\n")
	})
}

// A MOVED naming an address the client cannot use (port 0, no port, an
// unparseable slot, a host that does not resolve) ends the command with
// a *RetryError within the retry budget (MaxRetryWait for those that
// name no address: the client waits for the topology as for
// CLUSTERDOWN), reported to the Command hook as a redirect. Those it
// could not parse were left out of Stats' Moved count.
func TestReview8MovedToAnUnusableAddress(t *testing.T) {
	const key = "k"
	slot := strconv.Itoa(cluster.Slot(key))
	const noAddr = "waited too long for the cluster"
	tests := []struct {
		name  string
		moved func(addr string) string
		why   string // in the error, after the redirect
	}{
		{"port 0", func(string) string { return "MOVED " + slot + " 127.0.0.1:0" }, noAddr},
		{"empty host and port 0", func(string) string { return "MOVED " + slot + " :0" }, noAddr},
		{"no port", func(string) string { return "MOVED " + slot + " 127.0.0.1" }, noAddr},
		{"slot out of range", func(a string) string { return "MOVED 16384 " + a }, noAddr},
		{"unknown endpoint", func(string) string { return "MOVED " + slot + " ?:7000" }, noAddr},
		// Followed: its dial fails, the refresh points the slot back.
		{"host that does not resolve", func(string) string { return "MOVED " + slot + " nosuchhost.invalid:7000" },
			"too many redirects"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startMovingNode(t, tt.moved)
			var redirects atomic.Int64
			c, err := New(context.Background(), Config{
				Mode:   ModeCluster,
				Seeds:  []string{srv.ln.Addr().String()},
				Health: HealthOptions{Interval: -1},
				Cluster: ClusterOptions{
					RefreshInterval: -1, MaxRetryWait: time.Second,
					MinRefreshInterval: 10 * time.Millisecond,
				},
				Hooks: &Hooks{Command: func(_ context.Context, ev *CommandEvent) {
					if ev.Outcome == OutcomeRedirect {
						redirects.Add(1)
					}
				}},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			start := time.Now()
			_, err = c.Do(ctx, "GET", key)
			took := time.Since(start)
			var re *RetryError
			if !errors.As(err, &re) || !errors.Is(err, ErrRetryBudget) {
				t.Fatalf("GET: %v (%T), want a *RetryError", err, err)
			}
			if ctx.Err() != nil || took > 10*time.Second {
				t.Fatalf("GET took %v", took)
			}
			if !strings.Contains(err.Error(), srv.moved+" (") || !strings.Contains(err.Error(), tt.why) {
				t.Fatalf("GET: %v, want it to name the redirect %q and %q", err, srv.moved, tt.why)
			}
			if redirects.Load() == 0 {
				t.Fatal("the Command hook saw no redirect")
			}
			var moved int64
			for _, n := range c.Stats().Nodes {
				moved += n.Moved
			}
			if moved == 0 {
				t.Fatalf("Stats counted no MOVED: %+v", c.Stats().Nodes)
			}
			t.Logf("%v after %v, %d redirects reported", err, took, redirects.Load())
		})
	}
}

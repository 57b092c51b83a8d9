//go:build unix

package shard

import (
	"bytes"
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// shapeNode is a byte-level fake of a one-master cluster whose CLUSTER
// NODES and CLUSTER SHARDS, when asked for the failed nodes (CLUSTER
// SHARDS right after CLUSTER NODES on a connection), give replies of a
// shape no server sends. Its topology (CLUSTER SHARDS otherwise) is the
// current one.
type shapeNode struct {
	ln    net.Listener
	topo  atomic.Pointer[[]byte] // the topology
	nodes atomic.Pointer[[]byte] // the CLUSTER NODES reply
	list  atomic.Pointer[[]byte] // CLUSTER SHARDS after CLUSTER NODES
	wg    sync.WaitGroup
}

func startShapeNode(t *testing.T) *shapeNode {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &shapeNode{ln: ln}
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
			s.wg.Go(func() { s.serve(c) })
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

func (s *shapeNode) serve(c net.Conn) {
	afterNodes := false
	serveCommands(c, func(cmd []byte) []byte {
		up := bytes.ToUpper(cmd)
		was := afterNodes
		afterNodes = false
		switch {
		case bytes.Contains(up, []byte("$5\r\nNODES\r\n")):
			afterNodes = true
			return *s.nodes.Load()
		case bytes.Contains(up, []byte("$6\r\nSHARDS\r\n")):
			if was {
				return *s.list.Load()
			}
			return *s.topo.Load()
		case bytes.Contains(up, []byte("PING")):
			return []byte("+PONG\r\n")
		}
		return []byte("+OK\r\n")
	})
}

// TestReview11FailedNodeStaysOnAnUnreadableNodeList: a refresh learns
// which failed nodes the cluster still lists from a master's CLUSTER
// NODES, or CLUSTER SHARDS when an ACL refuses that. A reply it cannot
// read (an array whose entries have another shape, one that names no
// node) says nothing about them: it must keep the failed replica, as it
// does when no master answers. Taken as a list of no node, it retired
// every failed node, a NodeRetired telling each hook that its address
// left.
func TestReview11FailedNodeStaysOnAnUnreadableNodeList(t *testing.T) {
	ctx := context.Background()
	srv := startShapeNode(t)
	seed := srv.ln.Addr().String()
	withReplica, masterOnly := newBigTopology(1, 1, seed), newBigTopology(1, 0, seed)
	replica := withReplica.addr(0, 0) // no server: never dialed here (no health checks)
	good := encode(nil, withReplica.reply())
	noperm := []byte("-NOPERM this user has no permissions to run the 'cluster|nodes' command\r\n")
	srv.topo.Store(&good)
	srv.nodes.Store(&noperm)
	srv.list.Store(&good)
	c, err := New(ctx, Config{
		Mode:    ModeCluster,
		Seeds:   []string{seed},
		Health:  HealthOptions{Interval: -1},
		Cluster: ClusterOptions{RefreshInterval: -1, MinRefreshInterval: time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	listed := func() bool {
		for _, n := range c.Stats().Nodes {
			if n.Node.Addr == replica {
				return true
			}
		}
		return false
	}
	if !listed() {
		t.Fatalf("the replica %s is not in the first table's nodes: %+v", replica, c.Stats().Nodes)
	}
	// The replica fails: the topology leaves it out, the cluster still
	// lists it.
	gone := encode(nil, masterOnly.reply())
	srv.topo.Store(&gone)
	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if !listed() {
		t.Fatal("the failed replica, still listed by CLUSTER SHARDS, was not kept")
	}

	unreadable := []struct {
		name         string
		nodes, shard string
	}{
		{"CLUSTER SHARDS: an entry that is no map", string(noperm), "*1\r\n:1\r\n"},
		{"CLUSTER SHARDS: a shard without nodes", string(noperm), "*1\r\n*2\r\n$5\r\nslots\r\n*0\r\n"},
		{"CLUSTER SHARDS: a node that is no map", string(noperm), "*1\r\n*2\r\n$5\r\nnodes\r\n*1\r\n$5\r\nnode1\r\n"},
		{"CLUSTER SHARDS: no shard", string(noperm), "*0\r\n"},
		{"CLUSTER SHARDS: nodes without an address", string(noperm),
			"*1\r\n*2\r\n$5\r\nnodes\r\n*1\r\n*2\r\n$2\r\nid\r\n$1\r\na\r\n"},
		{"CLUSTER NODES: no node line", "$0\r\n\r\n", string(good)},
		{"CLUSTER NODES: lines of another shape", "$11\r\nnot a list\n\r\n", string(good)},
	}
	for _, u := range unreadable {
		nodes, shard := []byte(u.nodes), []byte(u.shard)
		srv.nodes.Store(&nodes)
		srv.list.Store(&shard)
		if err := c.Refresh(ctx); err != nil {
			t.Fatalf("%s: %v", u.name, err)
		}
		if !listed() {
			t.Fatalf("%s: the failed replica was retired on a node list the client could not read", u.name)
		}
	}

	// A list it can read and that leaves the replica out retires it.
	srv.nodes.Store(&noperm)
	srv.list.Store(&gone)
	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if listed() {
		t.Fatal("the replica the cluster forgot was kept")
	}
}

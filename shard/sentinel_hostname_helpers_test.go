package shard_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// Set-ups for the tests where Sentinels name a master by a host name
// ("vm:P", with announce-hostnames) while the client, a replica or
// another Sentinel names the same server by its address ("127.0.0.1:P").

// loopbackHostName returns this machine's host name when it resolves to
// 127.0.0.1 alone (and is not localhost, which needs no lookup), and
// skips the test otherwise.
func loopbackHostName(t *testing.T) string {
	t.Helper()
	host, err := os.Hostname()
	if err != nil {
		t.Skip(err)
	}
	ips, err := net.LookupHost(host)
	if err != nil || len(ips) != 1 || ips[0] != "127.0.0.1" || strings.EqualFold(host, "localhost") {
		t.Skipf("the host name %q resolves to %v, %v: want 127.0.0.1 alone", host, ips, err)
	}
	return host
}

// monitorByHostName makes Sentinel s forget the set's master set name and
// monitor it again at host:port with the given quorum, announcing host
// names, and waits until it names the master so.
func monitorByHostName(t *testing.T, s *redistest.Server, name, host string, port, quorum int) {
	t.Helper()
	for _, cmd := range [][]string{
		{"SENTINEL", "CONFIG", "SET", "resolve-hostnames", "yes"},
		{"SENTINEL", "CONFIG", "SET", "announce-hostnames", "yes"},
		{"SENTINEL", "REMOVE", name},
		{"SENTINEL", "MONITOR", name, host, fmt.Sprint(port), fmt.Sprint(quorum)},
		{"SENTINEL", "SET", name, "auth-user", sentDataUser},
		{"SENTINEL", "SET", name, "auth-pass", sentDataPW},
	} {
		if _, err := s.Do(cmd...); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	waitFor(t, 30*time.Second, fmt.Sprintf("the Sentinel to name the master %s:%d", host, port), func() bool {
		m, err := s.Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", name)
		return err == nil && m == fmt.Sprintf("%s\n%d", host, port)
	})
}

// hostNameFlip is a one-shard set of two Sentinels: the first names the
// master by a host name, the second by its address. cfg asks the first
// Sentinel first and queries only on Refresh, so that once the first
// stops answering the master's spelling changes and the server does not.
type hostNameFlip struct {
	set    *redistest.SentinelSet
	master *redistest.Server
	name   string            // the master set's name
	first  *redistest.Server // the Sentinel that names the master by host name
	byName string            // the master as the first Sentinel names it, host:port
	cfg    shard.Config
}

// startHostNameFlip starts a hostNameFlip whose first Sentinel monitors
// the master as host with the given quorum.
func startHostNameFlip(t *testing.T, host string, quorum int) hostNameFlip {
	t.Helper()
	o := sentinelSetOptions(1)
	o.Sentinels = 2
	set := redistest.StartSentinelsTB(t, o)
	master, _ := shardServers(t, set, 0)
	name := set.Names()[0]
	first := set.Sentinels[0]
	monitorByHostName(t, first, name, host, master.Port, quorum)
	cfg := sentinelConfig(set)
	cfg.Sentinel.Addrs = []string{first.Addr, set.Sentinels[1].Addr} // the first asked first
	cfg.Sentinel.RefreshInterval = -1                                // queries come from Refresh
	return hostNameFlip{
		set:    set,
		master: master,
		name:   name,
		first:  first,
		byName: fmt.Sprintf("%s:%d", host, master.Port),
		cfg:    cfg,
	}
}

// hostNameSentinel is a one-shard set watched by one Sentinel that names
// the master by this machine's host name and lists the replica, which
// replicates from the master's address.
type hostNameSentinel struct {
	host            string
	set             *redistest.SentinelSet
	master, replica *redistest.Server
	name            string            // the master set's name
	s               *redistest.Server // the Sentinel
	byName          string            // the master as the Sentinel names it, host:port
}

// startHostNameSentinel starts a hostNameSentinel (skipping the test
// where the host name does not resolve to 127.0.0.1 alone) and waits
// until the Sentinel lists the replica.
func startHostNameSentinel(t *testing.T) hostNameSentinel {
	t.Helper()
	host := loopbackHostName(t)
	o := sentinelSetOptions(1)
	o.Sentinels = 1
	set := redistest.StartSentinelsTB(t, o)
	master, replica := shardServers(t, set, 0)
	name := set.Names()[0]
	s := set.Sentinels[0]
	monitorByHostName(t, s, name, host, master.Port, 1)
	waitFor(t, 30*time.Second, "the Sentinel to list the replica "+replica.Addr, func() bool {
		v, err := s.Do("SENTINEL", "REPLICAS", name)
		return err == nil && strings.Contains(v, fmt.Sprint(replica.Port))
	})
	return hostNameSentinel{
		host:    host,
		set:     set,
		master:  master,
		replica: replica,
		name:    name,
		s:       s,
		byName:  fmt.Sprintf("%s:%d", host, master.Port),
	}
}

// skipUnlessMasterByName skips the test unless c, a client of a
// one-shard Sentinel set, took the master as byName (the client may have
// asked a Sentinel that names it otherwise first).
func skipUnlessMasterByName(t *testing.T, c *shard.Client, byName string) {
	t.Helper()
	if st := c.Stats().Sentinel; len(st) != 1 || st[0].Master != byName {
		t.Skipf("Sentinel stats %+v: want the master taken as %s", st, byName)
	}
}

// recordPromoted sets cfg's hooks to record every ReplicaPromoted event,
// and returns what has been recorded so far.
func recordPromoted(cfg *shard.Config) func() []shard.NodeEvent {
	var (
		mu       sync.Mutex
		promoted []shard.NodeEvent
	)
	cfg.Hooks = &shard.Hooks{NodeState: func(ev shard.NodeEvent) {
		if ev.Kind == shard.ReplicaPromoted {
			mu.Lock()
			promoted = append(promoted, ev)
			mu.Unlock()
		}
	}}
	return func() []shard.NodeEvent {
		mu.Lock()
		defer mu.Unlock()
		return append([]shard.NodeEvent(nil), promoted...)
	}
}

// pooledClientID returns a function that reports the CLIENT ID of the
// connection c sends a command for key "k" on: while it stays the same,
// the pooled connection has not been closed.
func pooledClientID(t *testing.T, c *shard.Client) func() int64 {
	t.Helper()
	return func() int64 {
		t.Helper()
		id, err := redis.Int64(c.DoKey(context.Background(), "k", "CLIENT", "ID"))
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
}

package redistest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// role returns the first line of ROLE on s ("master" or "slave").
func role(s *Server) string {
	out, err := s.Do("ROLE")
	if err != nil {
		return "error: " + err.Error()
	}
	first, _, _ := strings.Cut(out, "\n")
	return first
}

// eventually polls cond every 20 ms until it is true or d passes, and
// returns how long it took.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > d {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

// nodesView returns CLUSTER NODES of s, parsed.
func nodesView(t *testing.T, s *Server) []nodeInfo {
	t.Helper()
	out, err := s.Do("CLUSTER", "NODES")
	if err != nil {
		t.Fatalf("CLUSTER NODES on %s: %v", s.Addr, err)
	}
	nodes, err := parseNodes(out)
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}

func TestCluster(t *testing.T) {
	t.Parallel()
	start := time.Now()
	c := StartClusterTB(t, 3, 1, Options{NodeTimeout: time.Second})
	t.Logf("3+3 cluster ready in %s", time.Since(start).Round(time.Millisecond))

	if len(c.Nodes) != 6 || len(c.Seeds()) != 6 {
		t.Fatalf("%d nodes, %d seeds; want 6", len(c.Nodes), len(c.Seeds()))
	}
	masters, replicas := c.Masters(), c.Replicas()
	if len(masters) != 3 || len(replicas) != 3 {
		t.Fatalf("%d masters and %d replicas, want 3 and 3", len(masters), len(replicas))
	}

	t.Run("topology agrees with CLUSTER NODES", func(t *testing.T) {
		nodes := nodesView(t, c.Nodes[5])
		byPort := map[int]nodeInfo{}
		slots := 0
		for _, n := range nodes {
			byPort[n.Port] = n
			for _, r := range n.Slots {
				slots += r[1] - r[0] + 1
			}
		}
		if slots != SlotCount {
			t.Fatalf("CLUSTER NODES lists %d slots, want %d", slots, SlotCount)
		}
		for i, m := range masters {
			n := byPort[m.Port]
			if !n.has("master") {
				t.Errorf("Masters()[%d] %s is %v in CLUSTER NODES", i, m.Addr, n.Flags)
			}
			if r := replicas[i]; byPort[r.Port].MasterID != n.ID {
				t.Errorf("Replicas()[%d] %s does not replicate Masters()[%d] %s", i, r.Addr, i, m.Addr)
			}
		}
		// redis-cli gives the first three nodes the slots in order.
		for i, slot := range []int{0, 5461, 10923} {
			if masters[i] != c.Nodes[i] {
				t.Errorf("Masters()[%d] = %s, want the node started %d-th (%s)", i, masters[i].Addr, i, c.Nodes[i].Addr)
			}
			if m, err := c.MasterOfSlot(slot); err != nil || m != c.Nodes[i] {
				t.Errorf("MasterOfSlot(%d) = %v, %v; want %s", slot, m, err, c.Nodes[i].Addr)
			}
		}
		for _, slot := range []int{0, 1, 5460, 5461, 10922, 10923, 16383} {
			m, err := c.MasterOfSlot(slot)
			if err != nil {
				t.Fatal(err)
			}
			if !byPort[m.Port].owns(slot) {
				t.Errorf("MasterOfSlot(%d) = %s, which CLUSTER NODES says does not own it", slot, m.Addr)
			}
			r, err := c.ReplicaOf(m)
			if err != nil {
				t.Fatal(err)
			}
			if byPort[r.Port].MasterID != byPort[m.Port].ID || r == m {
				t.Errorf("ReplicaOf(%s) = %s, which replicates %s", m.Addr, r.Addr, byPort[r.Port].MasterID)
			}
		}
		for _, slot := range []int{-1, SlotCount} {
			if _, err := c.MasterOfSlot(slot); !errors.Is(err, ErrInvalid) {
				t.Errorf("MasterOfSlot(%d) = %v, want ErrInvalid", slot, err)
			}
		}
		if _, err := c.ReplicaOf(replicas[0]); err == nil {
			t.Errorf("ReplicaOf(a replica) succeeded")
		}
		if _, err := c.ReplicaOf(&Server{Port: 1}); !errors.Is(err, ErrInvalid) {
			t.Errorf("ReplicaOf(a foreign server) = %v, want ErrInvalid", err)
		}
	})

	t.Run("every node lists every replica in CLUSTER SLOTS", func(t *testing.T) {
		for _, s := range c.Nodes {
			v, err := s.query(t.Context(), "CLUSTER", "SLOTS")
			if err != nil {
				t.Fatal(err)
			}
			ranges, err := parseSlots(v)
			if err != nil {
				t.Fatal(err)
			}
			if err := covered(ranges); err != nil {
				t.Errorf("%s: %v", s.Addr, err)
			}
			for _, r := range ranges {
				if len(r.Replicas) != 1 {
					t.Errorf("%s: slots %d-%d list %d replicas", s.Addr, r.Start, r.End, len(r.Replicas))
				}
			}
		}
	})

	t.Run("failover and rejoin", func(t *testing.T) {
		old, err := c.MasterOfSlot(0)
		if err != nil {
			t.Fatal(err)
		}
		replica, err := c.ReplicaOf(old)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := old.Do("SET", "{06S}k", "before"); err != nil { // "06S" hashes to slot 0
			t.Fatal(err)
		}
		if err := old.Kill(); err != nil {
			t.Fatal(err)
		}
		took := eventually(t, 6*time.Second, "replica promoted", func() bool { return role(replica) == "master" })
		t.Logf("replica %s promoted %s after the master was killed", replica.Addr, took.Round(time.Millisecond))

		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		if err := c.WaitHealthy(ctx); err != nil {
			t.Fatalf("WaitHealthy after failover: %v", err)
		}
		if m, err := c.MasterOfSlot(0); err != nil || m != replica {
			t.Errorf("MasterOfSlot(0) after failover = %v, %v; want %s", m, err, replica.Addr)
		}
		if got, err := replica.Do("GET", "{06S}k"); err != nil || got != "before" {
			t.Errorf("GET on the promoted replica = %q, %v", got, err)
		}
		if n := len(c.Masters()); n != 3 {
			t.Errorf("%d healthy masters after failover, want 3", n)
		}

		start := time.Now()
		if err := old.Restart(); err != nil {
			t.Fatalf("Restart: %v", err)
		}
		eventually(t, 10*time.Second, "old master back as a synced replica of the new one", func() bool {
			info, err := old.Do("INFO", "replication")
			if err != nil || infoField(info, "role") != "slave" || infoField(info, "master_link_status") != "up" {
				return false
			}
			r, err := c.ReplicaOf(replica)
			return err == nil && r == old
		})
		t.Logf("old master %s rejoined as a replica in %s", old.Addr, time.Since(start).Round(time.Millisecond))
		if err := c.WaitHealthy(ctx); err != nil {
			t.Fatalf("WaitHealthy after rejoin: %v", err)
		}
		_, err = old.Do("GET", "{06S}k")
		var re *ReplyError
		if !errors.As(err, &re) || !strings.HasPrefix(re.Message, "MOVED 0 ") {
			t.Errorf("GET on the old master, now a replica = %v, want MOVED 0", err)
		}
	})

	t.Run("Stop", func(t *testing.T) {
		pids := make([]int, 0, len(c.Nodes))
		for _, s := range c.Nodes {
			pids = append(pids, s.PID())
		}
		if err := c.Stop(); err != nil {
			t.Fatal(err)
		}
		for _, pid := range pids {
			if alive(pid) {
				t.Errorf("process %d survived Cluster.Stop", pid)
			}
		}
		if c.Masters() != nil {
			t.Errorf("Masters() after Stop is not nil")
		}
	})
}

// TestClusterTLSWithACL runs the cluster bus, replication and redis-cli
// --cluster create over TLS, with the default user switched off: the
// replicas only show up in CLUSTER SLOTS if they could log in to their
// masters as the harness user.
func TestClusterTLSWithACL(t *testing.T) {
	t.Parallel()
	c := StartClusterTB(t, 3, 1, Options{
		TLS:   true,
		Users: []User{{Name: "admin", Password: "cluster-secret"}, {Name: "app", Password: "app-secret", Rules: "~* +@all -@dangerous"}},
	})
	for _, s := range c.Nodes {
		cfg := s.TLS.ClientConfig()
		conn, err := redis.Dial("tcp", s.Addr, redis.DialUseTLS(true), redis.DialTLSConfig(cfg),
			redis.DialUsername("app"), redis.DialPassword("app-secret"),
			redis.DialConnectTimeout(2*time.Second), redis.DialReadTimeout(2*time.Second))
		if err != nil {
			t.Fatalf("%s: %v", s.Addr, err)
		}
		info, err := redis.String(conn.Do("CLUSTER", "INFO"))
		conn.Close()
		if err != nil || infoField(info, "cluster_state") != "ok" {
			t.Fatalf("%s: CLUSTER INFO = %q, %v", s.Addr, info, err)
		}
	}
	if m, r := c.Masters(), c.Replicas(); len(m) != 3 || len(r) != 3 {
		t.Fatalf("%d masters, %d replicas; want 3 and 3", len(m), len(r))
	}
	// CLUSTER NODES gives TLS clients the TLS ports, which are Server.Port.
	for _, n := range nodesView(t, c.Nodes[0]) {
		if c.byPort[n.Port] == nil {
			t.Errorf("CLUSTER NODES names port %d, which is no node's Port", n.Port)
		}
	}
}

func TestStartClusterBadInput(t *testing.T) {
	tests := []struct {
		name              string
		masters, replicas int
		opts              Options
	}{
		{"two masters", 2, 0, Options{}},
		{"negative replicas", 3, -1, Options{}},
		{"too many nodes", 40, 1, Options{}},
		{"negative node timeout", 3, 0, Options{NodeTimeout: -time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := StartCluster(tt.masters, tt.replicas, tt.opts)
			if !errors.Is(err, ErrInvalid) {
				if c != nil {
					c.Stop()
				}
				t.Fatalf("StartCluster = %v, want ErrInvalid", err)
			}
		})
	}
}

// TestStartClusterCreateFails checks that a cluster that cannot be
// created reports redis-cli's complaint and the node logs.
func TestStartClusterCreateFails(t *testing.T) {
	Require(t)
	t.Parallel()
	_, err := StartCluster(3, 0, Options{Args: []string{"--cluster-enabled", "no"}})
	if err == nil {
		t.Fatal("StartCluster succeeded with cluster support off")
	}
	for _, want := range []string{"is not configured as a cluster node", "log (last 5 lines)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	// TestMain fails the run if any of the three servers is still running.
}

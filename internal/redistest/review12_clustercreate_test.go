package redistest

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestClusterPlanMatchesRedisCLI asks redis-cli for its plan (it prints
// the slot ranges and the replica of each master, then asks for a "yes"
// that it does not get, so it changes nothing) and checks that
// StartCluster would lay out the same nodes the same way.
func TestClusterPlanMatchesRedisCLI(t *testing.T) {
	Require(t)
	t.Parallel()
	nodes := StartNTB(t, 10, Options{Cluster: true})
	masterRe := regexp.MustCompile(`Master\[(\d+)\] -> Slots (\d+) - (\d+)`)
	replicaRe := regexp.MustCompile(`Adding replica (\S+) to (\S+)`)
	for _, tc := range []struct{ masters, replicas int }{
		{3, 0}, {4, 0}, {5, 0}, {6, 0}, {7, 0}, {10, 0}, {3, 1}, {4, 1}, {5, 1}, {3, 2},
	} {
		t.Run(fmt.Sprintf("%d+%d", tc.masters, tc.replicas), func(t *testing.T) {
			n := tc.masters * (1 + tc.replicas)
			args := []string{"--cluster", "create"}
			for _, s := range nodes[:n] {
				args = append(args, s.Addr)
			}
			args = append(args, "--cluster-replicas", strconv.Itoa(tc.replicas))
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			out, _ := nodes[0].CLI(ctx, args...) // declined: no "yes" on stdin
			plan := masterRe.FindAllStringSubmatch(out, -1)
			if len(plan) != tc.masters {
				t.Fatalf("redis-cli planned %d masters, want %d:\n%s", len(plan), tc.masters, out)
			}
			got := slotRanges(tc.masters)
			if len(got) != tc.masters {
				t.Fatalf("slotRanges(%d) has %d ranges", tc.masters, len(got))
			}
			for i, m := range plan {
				lo, _ := strconv.Atoi(m[2])
				hi, _ := strconv.Atoi(m[3])
				if m[1] != strconv.Itoa(i) || got[i] != [2]int{lo, hi} {
					t.Errorf("master %d: slotRanges gives %d-%d, redis-cli Master[%s] %d-%d", i, got[i][0], got[i][1], m[1], lo, hi)
				}
			}
			index := make(map[string]int, n)
			for i, s := range nodes[:n] {
				index[s.Addr] = i
			}
			adds := replicaRe.FindAllStringSubmatch(out, -1)
			if len(adds) != tc.masters*tc.replicas {
				t.Fatalf("redis-cli planned %d replicas, want %d:\n%s", len(adds), tc.masters*tc.replicas, out)
			}
			seen := make(map[int]bool)
			for _, a := range adds {
				r, okR := index[a[1]]
				m, okM := index[a[2]]
				if !okR || !okM {
					t.Fatalf("redis-cli planned a replica of unknown nodes: %q", a[0])
				}
				seen[r] = true
				if got := masterIndex(r, tc.masters, tc.replicas); got != m {
					t.Errorf("node %d: masterIndex gives master %d, redis-cli planned %d", r, got, m)
				}
			}
			for i := range n {
				if i < tc.masters && masterIndex(i, tc.masters, tc.replicas) != -1 {
					t.Errorf("node %d: masterIndex makes a master a replica", i)
				}
				if i >= tc.masters && !seen[i] {
					t.Errorf("redis-cli planned no master for node %d", i)
				}
			}
		})
	}
}

// TestClusterLayout checks what every test relies on after StartCluster:
// every node knows all the others (no handshake left), the first nodes
// are the masters with redis-cli's slot ranges and config epochs 1, 2,
// 3, the replicas follow them as redis-cli plans it, logged in with
// masterauth and synced, and every node lists them in CLUSTER SLOTS.
func TestClusterLayout(t *testing.T) {
	t.Parallel()
	start := time.Now()
	c := StartClusterTB(t, 3, 2, Options{DefaultPassword: "layout-pw"})
	t.Logf("3+6 cluster ready in %s", time.Since(start).Round(time.Millisecond))
	if len(c.Nodes) != 9 {
		t.Fatalf("%d nodes, want 9", len(c.Nodes))
	}
	wantSlots := map[int][2]int{0: {0, 5460}, 1: {5461, 10922}, 2: {10923, 16383}}
	wantMaster := map[int]int{4: 0, 5: 0, 6: 1, 7: 1, 8: 2, 3: 2} // redis-cli's plan
	for _, s := range c.Nodes {
		out, err := s.Do("CLUSTER", "NODES")
		if err != nil {
			t.Fatalf("CLUSTER NODES on %s: %v", s.Addr, err)
		}
		nodes, err := parseNodes(out)
		if err != nil {
			t.Fatal(err)
		}
		if len(nodes) != 9 {
			t.Fatalf("%s lists %d nodes, want 9:\n%s", s.Addr, len(nodes), out)
		}
		byPort := make(map[int]nodeInfo)
		epoch := make(map[int]string)
		for _, line := range strings.Split(out, "\n") {
			f := strings.Fields(line)
			if len(f) < 8 {
				t.Fatalf("short CLUSTER NODES line %q", line)
			}
			_, port, _ := strings.Cut(strings.Split(f[1], "@")[0], ":")
			p, _ := strconv.Atoi(port)
			epoch[p] = f[6]
		}
		for _, n := range nodes {
			byPort[n.Port] = n
		}
		for i, node := range c.Nodes {
			n, ok := byPort[node.Port]
			if !ok {
				t.Fatalf("%s does not list node %d (%s)", s.Addr, i, node.Addr)
			}
			if !n.healthy() {
				t.Errorf("%s sees node %d as %v", s.Addr, i, n.Flags)
			}
			if want, isMaster := wantSlots[i]; isMaster {
				if !n.has("master") || len(n.Slots) != 1 || n.Slots[0] != want {
					t.Errorf("%s: node %d is %v with slots %v, want a master of %v", s.Addr, i, n.Flags, n.Slots, want)
				}
				if epoch[node.Port] != strconv.Itoa(i+1) {
					t.Errorf("%s: node %d has config epoch %s, want %d", s.Addr, i, epoch[node.Port], i+1)
				}
				continue
			}
			m := c.Nodes[wantMaster[i]]
			if !n.has("slave") || n.MasterID != byPort[m.Port].ID {
				t.Errorf("%s: node %d is %v of %q, want a replica of node %d (%s)", s.Addr, i, n.Flags, n.MasterID, wantMaster[i], byPort[m.Port].ID)
			}
		}
		v, err := s.query(t.Context(), "CLUSTER", "SLOTS")
		if err != nil {
			t.Fatal(err)
		}
		ranges, err := parseSlots(v)
		if err != nil {
			t.Fatal(err)
		}
		if len(ranges) != 3 {
			t.Fatalf("%s: CLUSTER SLOTS has %d ranges, want 3", s.Addr, len(ranges))
		}
		for _, r := range ranges {
			if len(r.Replicas) != 2 {
				t.Errorf("%s: slots %d-%d list %d replicas, want 2", s.Addr, r.Start, r.End, len(r.Replicas))
			}
		}
	}
	for i, s := range c.Nodes[3:] {
		info, err := s.Do("INFO", "replication")
		if err != nil {
			t.Fatal(err)
		}
		if infoField(info, "master_link_status") != "up" || infoField(info, "master_port") != strconv.Itoa(c.Nodes[wantMaster[i+3]].Port) {
			t.Errorf("node %d: not synced with node %d:\n%s", i+3, wantMaster[i+3], info)
		}
	}
}

// TestClusterCreateTimesOut checks that joining nodes one of which hangs
// ends with the context, with an error that wraps ErrTimeout and names
// the node.
func TestClusterCreateTimesOut(t *testing.T) {
	Require(t)
	t.Parallel()
	nodes := StartNTB(t, 3, Options{Cluster: true})
	if err := nodes[2].Pause(); err != nil {
		t.Fatal(err)
	}
	defer nodes[2].Resume()
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	start := time.Now()
	_, err := newCluster(nodes).create(ctx, 3, 0)
	took := time.Since(start)
	if !errors.Is(err, ErrTimeout) || !strings.Contains(fmt.Sprint(err), nodes[2].Addr) {
		t.Errorf("create with a hung node = %v, want ErrTimeout naming %s", err, nodes[2].Addr)
	}
	if took > 10*time.Second {
		t.Errorf("create with a hung node took %s after a 1 s deadline", took)
	}
}

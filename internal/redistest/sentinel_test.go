package redistest

import (
	"strings"
	"testing"
	"time"
)

func TestStartSentinels(t *testing.T) {
	set := StartSentinelsTB(t, SentinelOptions{DownAfter: time.Second})
	if len(set.Shards) != 3 || len(set.Sentinels) != 3 {
		t.Fatalf("got %d shards and %d sentinels, want 3 and 3", len(set.Shards), len(set.Sentinels))
	}
	for i, sh := range set.Shards {
		if len(sh.Nodes) != 2 {
			t.Fatalf("shard %d has %d nodes, want 2", i, len(sh.Nodes))
		}
		m, err := set.Master(i)
		if err != nil {
			t.Fatal(err)
		}
		if m != sh.Nodes[0] {
			t.Errorf("shard %d: master %s, want the first node %s", i, m.Addr, sh.Nodes[0].Addr)
		}
		for _, s := range set.Sentinels {
			got, err := s.Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", sh.Name)
			if err != nil {
				t.Fatal(err)
			}
			if want := "127.0.0.1\n" + itoa(m.Port); got != want {
				t.Errorf("sentinel %s says %q for %s, want %q", s.Addr, got, sh.Name, want)
			}
		}
		role, err := sh.Nodes[1].Do("ROLE")
		if err != nil || !strings.HasPrefix(role, "slave") {
			t.Errorf("replica of shard %d: ROLE %q, %v", i, role, err)
		}
	}
	// Sentinel processes are in the registry like data nodes.
	pids := RunningPIDs()
	for _, s := range set.Sentinels {
		found := false
		for _, p := range pids {
			found = found || p == s.PID()
		}
		if !found {
			t.Errorf("sentinel %s (pid %d) not in RunningPIDs", s.Addr, s.PID())
		}
	}
}

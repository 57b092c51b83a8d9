package shard_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
)

// A +switch-master that names a server that is not a master (a lying or
// confused Sentinel names the shard's replica) changes nothing: the
// client checks the announced master with ROLE first, keeps writing to
// the real master, and counts no failover. (Checked: not a bug.)
func TestSentinelSwitchToAReplicaIsIgnored(t *testing.T) {
	set := redistest.StartSentinelsTB(t, sentinelSetOptions(1))
	// A plain server with the Sentinels' password stands in for a fourth
	// Sentinel, so that the test can publish a +switch-master.
	fake := redistest.StartNTB(t, 1, redistest.Options{DefaultPassword: sentPW})[0]
	cfg := sentinelConfig(set)
	cfg.Sentinel.Addrs = append(cfg.Sentinel.Addrs, fake.Addr)
	c := newClient(t, cfg)
	ctx := context.Background()
	waitFor(t, 30*time.Second, "subscriptions", func() bool { return c.Stats().Sentinel[0].Subscribed == 4 })
	master, replica := shardServers(t, set, 0)
	_, mp, _ := net.SplitHostPort(master.Addr)
	_, rp, _ := net.SplitHostPort(replica.Addr)
	if _, err := fake.Do("PUBLISH", "+switch-master", fmt.Sprintf("%s 127.0.0.1 %s 127.0.0.1 %s", set.Shards[0].Name, mp, rp)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the message and the query it asks for", func() bool {
		s := c.Stats().Sentinel[0]
		return s.SwitchMessages > 0 && s.Queries > 1
	})
	s := c.Stats().Sentinel[0]
	if s.Master != master.Addr || s.Failovers != 0 {
		t.Fatalf("after a +switch-master to the replica: master %s, %d failovers; want %s, 0", s.Master, s.Failovers, master.Addr)
	}
	if _, err := c.Do(ctx, "SET", "after-bad-switch", "1"); err != nil {
		t.Fatal(err)
	}
	if v, err := master.Do("GET", "after-bad-switch"); err != nil || v != "1" {
		t.Fatalf("GET on the master = %q, %v; want the write there", v, err)
	}
}

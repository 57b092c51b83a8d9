package shard_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/addrkey"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// missedFailover sets up a failover the client missed: the Sentinels
// name the master "vm:P" and, after the failover (the client's
// subscription was down), the promoted replica "127.0.0.2:P", while the
// old master still says it is the master. From then on host names are
// looked up with lookup. It returns the client, whose master is still
// vm:P, 127.0.0.2:P, and the old and new masters.
func missedFailover(t *testing.T, lookup func(context.Context, string) ([]netip.Addr, error)) (c *shard.Client, announced string, old, next *redistest.Server) {
	t.Helper()
	host := loopbackHostName(t)
	const cliUser, cliPW = "watcher", "watcher-secret-14"
	o := sentinelSetOptions(1)
	o.Sentinels = 1
	o.SentinelUser = "sentinel-admin"
	set := redistest.StartSentinelsTB(t, o)
	old, next = shardServers(t, set, 0)
	name := set.Names()[0]
	s := set.Sentinels[0]
	// The replica announces 127.0.0.2 and the old master's port, where a
	// forwarder reaches it.
	announced = net.JoinHostPort("127.0.0.2", strconv.Itoa(old.Port))
	forwardFrom(t, announced, next.Addr)
	for _, cmd := range [][]string{
		{"CONFIG", "SET", "replica-announce-ip", "127.0.0.2"},
		{"CONFIG", "SET", "replica-announce-port", strconv.Itoa(old.Port)},
	} {
		if _, err := next.Do(cmd...); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	// The replica announces itself on its next handshake.
	if _, err := old.Do("CLIENT", "KILL", "TYPE", "replica"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the master to list its replica at "+announced, func() bool {
		v, err := old.Do("INFO", "replication")
		return err == nil && strings.Contains(v, fmt.Sprintf("ip=127.0.0.2,port=%d,state=online", old.Port))
	})
	monitorByHostName(t, s, name, host, old.Port, 1)
	// The Sentinel may not make the old master a replica: it goes on
	// saying it is the master, as one just resumed after a pause does
	// until the Sentinels reconfigure it.
	if _, err := old.Do("ACL", "SETUSER", sentDataUser, "-replicaof", "-slaveof"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Do("ACL", "SETUSER", cliUser, "on", ">"+cliPW, "~*", "&*", "+@all"); err != nil {
		t.Fatal(err)
	}

	cfg := sentinelConfig(set)
	cfg.Sentinel.Addrs = []string{s.Addr}
	cfg.Sentinel.Username, cfg.Sentinel.Password = cliUser, cliPW
	cfg.Sentinel.RefreshInterval = -1 // queries come from Refresh
	c = newClient(t, cfg)
	byName := fmt.Sprintf("%s:%d", host, old.Port)
	if st := c.Stats().Sentinel; len(st) != 1 || st[0].Master != byName {
		t.Fatalf("Sentinel stats %+v: want the master taken as %s", st, byName)
	}
	waitFor(t, 10*time.Second, "the subscription", func() bool { return c.Stats().Sentinel[0].Subscribed == 1 })

	// The client's subscription goes down: it misses the +switch-master.
	if _, err := s.Do("ACL", "SETUSER", cliUser, "off"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Do("CLIENT", "KILL", "USER", cliUser); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the subscription to be lost", func() bool { return c.Stats().Sentinel[0].Subscribed == 0 })

	waitFor(t, 30*time.Second, "the Sentinel to start a failover", func() bool {
		_, err := s.Do("SENTINEL", "FAILOVER", name)
		return err == nil || strings.Contains(err.Error(), "INPROG")
	})
	waitFor(t, 30*time.Second, "the Sentinel to name the master "+announced, func() bool {
		m, err := s.Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", name)
		return err == nil && m == "127.0.0.2\n"+strconv.Itoa(old.Port)
	})
	if v, err := old.Do("ROLE"); err != nil || !strings.HasPrefix(v, "master") {
		t.Fatalf("the old master's ROLE: %q, %v; want master", v, err)
	}

	t.Cleanup(addrkey.SetLookupForTest(lookup))
	if _, err := s.Do("ACL", "SETUSER", cliUser, "on"); err != nil {
		t.Fatal(err)
	}
	return c, announced, old, next
}

// missedFailoverBehindAHangingResolver is missedFailover with a resolver
// that does not answer until the test ends. It returns the client, whose
// master is still vm:P, and 127.0.0.2:P.
func missedFailoverBehindAHangingResolver(t *testing.T) (c *shard.Client, announced string) {
	t.Helper()
	stop := make(chan struct{})
	c, announced, _, _ = missedFailover(t, func(ctx context.Context, _ string) ([]netip.Addr, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-stop:
			return nil, errNoDNS
		}
	})
	t.Cleanup(func() { close(stop) }) // before the resolver is restored
	return c, announced
}

// Installing the new master compared the two spellings twice, each time
// waiting the dial timeout for the same lookup of vm (whether to keep the
// current master, then whether its pools name the same server): the query
// took two dial timeouts more than it needs. The answer of the first
// comparison is now used again.
func TestReview18SentinelInstallComparesOnce(t *testing.T) {
	c, announced := missedFailoverBehindAHangingResolver(t)
	ctx := context.Background()
	// The comparison of vm:P with 127.0.0.2:P waits the dial timeout
	// (1s) for the lookup of vm once; before, it waited once more when
	// the new master was installed.
	start := time.Now()
	if err := c.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if st := c.Stats().Sentinel; st[0].Master != announced {
		t.Fatalf("the Sentinels name %s, the resolver hangs: the client's master is %s", announced, st[0].Master)
	}
	if took >= 1800*time.Millisecond {
		t.Errorf("Refresh took %v with a resolver that hangs and a dial timeout of 1s: want one wait for the lookup, not two", took)
	}
}

// Installing the new master compares the two spellings, which waits the
// dial timeout for the lookup of vm. A caller's Refresh with a shorter
// deadline returns at it: the query runs in the shard's background loop,
// and Refresh only waits for its round.
func TestReview18SentinelRefreshDeadlineBoundsTheInstall(t *testing.T) {
	c, announced := missedFailoverBehindAHangingResolver(t)
	ctx := context.Background()
	// Installing 127.0.0.2:P in place of vm:P compares the two, and the
	// lookup of vm hangs for the dial timeout (1s). The caller's deadline
	// bounds its wait all the same.
	const deadline = 200 * time.Millisecond
	rctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	start := time.Now()
	err := c.Refresh(rctx)
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Refresh with a deadline of %v, while the comparison waits for the lookup: %v; want the deadline's error", deadline, err)
	}
	if took >= 800*time.Millisecond {
		t.Errorf("Refresh with a deadline of %v returned after %v: the comparison was not bounded by it", deadline, took)
	}
	// The query goes on in the background and installs the new master
	// once the lookup gives up.
	waitFor(t, 30*time.Second, "the master "+announced, func() bool { return c.Stats().Sentinel[0].Master == announced })
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Fatalf("the new master was installed after %v: the comparison did not wait for the lookup, which the test needs", d)
	}
}

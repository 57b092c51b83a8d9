package sentinel_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/sentinel"
)

// roleMaster is a VerifiedMasterAddr check: the server at addr says with
// ROLE that it is a master.
func roleMaster(ctx context.Context, addr string) error {
	conn, err := redis.DialContext(ctx, "tcp", addr, redis.DialConnectTimeout(5*time.Second), redis.DialReadTimeout(5*time.Second))
	if err != nil {
		return err
	}
	defer conn.Close()
	role, err := sentinel.CheckRole(ctx, conn)
	if err != nil {
		return err
	}
	if role.Kind != sentinel.RoleMaster {
		return fmt.Errorf("%s is a %s", addr, role.Kind)
	}
	return nil
}

// hungSentinel listens on 127.0.0.1 and accepts connections that never
// get a reply: a Sentinel that hangs.
func hungSentinel(t *testing.T) string {
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

// Sentinels that spell one master differently (one with
// announce-hostnames names it "localhost:P", the others "127.0.0.1:P")
// name one server, and their answers count together. Before, they were
// counted by the exact string: the votes split, a stale Sentinel listed
// first (naming an old master that still says it is a master) won the
// tie, and with a hung Sentinel the majority was never seen, so the query
// waited for the hung one's ReadTimeout.
func TestReview11SentinelVotesCountOneMasterUnderTwoSpellings(t *testing.T) {
	set := redistest.StartSentinelsTB(t, redistest.SentinelOptions{Shards: 1, Sentinels: 3})
	master, err := set.Master(0)
	if err != nil {
		t.Fatal(err)
	}
	stale := redistest.StartTB(t, redistest.Options{}) // an old master restarted empty
	name := set.Names()[0]
	s := set.Sentinels
	if len(s) != 3 {
		t.Fatalf("%d Sentinels, want 3", len(s))
	}
	do := func(sent *redistest.Server, cmds ...[]string) {
		t.Helper()
		for _, cmd := range cmds {
			if _, err := sent.Do(cmd...); err != nil {
				t.Fatalf("%s: %v: %v", sent.Addr, cmd, err)
			}
		}
	}
	waitNamed := func(sent *redistest.Server, host string, port int) {
		t.Helper()
		want := fmt.Sprintf("%s\n%d", host, port)
		deadline := time.Now().Add(60 * time.Second)
		for {
			got, err := sent.Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", name)
			if err == nil && got == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s names %q, %v; want %q", sent.Addr, got, err, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	byHostname := func(sent *redistest.Server) {
		t.Helper()
		do(sent,
			[]string{"SENTINEL", "CONFIG", "SET", "resolve-hostnames", "yes"},
			[]string{"SENTINEL", "CONFIG", "SET", "announce-hostnames", "yes"},
			[]string{"SENTINEL", "REMOVE", name},
			[]string{"SENTINEL", "MONITOR", name, "localhost", fmt.Sprint(master.Port), "2"},
		)
		waitNamed(sent, "localhost", master.Port)
	}
	// s[0] is stale: it names another server that says it is a master.
	do(s[0], []string{"SENTINEL", "REMOVE", name}, []string{"SENTINEL", "MONITOR", name, "127.0.0.1", fmt.Sprint(stale.Port), "2"})
	waitNamed(s[0], "127.0.0.1", stale.Port)
	byHostname(s[1])
	waitNamed(s[2], "127.0.0.1", master.Port)

	ctx := context.Background()
	localhost := "localhost:" + fmt.Sprint(master.Port)
	newClient := func(addrs []string, opts sentinel.Options) *sentinel.Client {
		t.Helper()
		c, err := sentinel.New(name, addrs, opts)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	// Two Sentinels name the master, in two spellings; the stale one,
	// listed first, names the old master.
	c := newClient([]string{s[0].Addr, s[1].Addr, s[2].Addr}, sentinel.Options{})
	got, from, err := c.VerifiedMasterAddr(ctx, roleMaster)
	if err != nil || (got != master.Addr && got != localhost) || from == s[0].Addr {
		t.Errorf("VerifiedMasterAddr = %q from %s, %v; want the master %s (or %s), named by 2 of 3 Sentinels, not the stale %s's %s",
			got, from, err, master.Addr, localhost, s[0].Addr, stale.Addr)
	}

	// The two spellings are a majority of three: the hung third Sentinel
	// is not waited for.
	hung := hungSentinel(t)
	c = newClient([]string{s[1].Addr, s[2].Addr, hung}, sentinel.Options{ReadTimeout: 20 * time.Second, DialTimeout: 20 * time.Second})
	start := time.Now()
	got, _, err = c.VerifiedMasterAddr(ctx, roleMaster)
	took := time.Since(start)
	if err != nil || (got != master.Addr && got != localhost) {
		t.Errorf("VerifiedMasterAddr with a hung Sentinel = %q, %v; want the master %s (or %s)", got, err, master.Addr, localhost)
	}
	if took > 8*time.Second {
		t.Errorf("VerifiedMasterAddr took %v with 2 of 3 Sentinels naming the master: want no wait for the hung one (ReadTimeout 20s)", took)
	}

	// With two Sentinels spelling it "localhost" and one "127.0.0.1"
	// (listed last), the spelling returned, the one that is dialled, is
	// the one of the most, whichever two answer first.
	byHostname(s[0])
	c = newClient([]string{s[0].Addr, s[1].Addr, s[2].Addr}, sentinel.Options{})
	got, _, err = c.VerifiedMasterAddr(ctx, roleMaster)
	if err != nil || got != localhost {
		t.Errorf("VerifiedMasterAddr = %q, %v; want %s, the spelling of 2 of 3 Sentinels", got, err, localhost)
	}
}

package sentinel_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/sentinel"
	"go.uber.org/goleak"
)

// TestMain stops the examples' servers (example_servers_test.go), then
// fails the package when a test left a goroutine behind.
func TestMain(m *testing.M) {
	skipExamplesWithoutRedis()
	code := m.Run()
	stopExampleSentinels()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

const sentinelPassword = "s3ntinel-secret"

func TestClientLive(t *testing.T) {
	set := redistest.StartSentinelsTB(t, redistest.SentinelOptions{Shards: 2, SentinelPassword: sentinelPassword})
	ctx := context.Background()
	// A dead Sentinel listed first is skipped.
	dead, err := redistest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addrs := append([]string{"127.0.0.1:" + itoa(dead)}, set.Addrs()...)
	c, err := sentinel.New("master-1", addrs, sentinel.Options{Password: sentinelPassword})
	if err != nil {
		t.Fatal(err)
	}
	master, err := set.Master(1)
	if err != nil {
		t.Fatal(err)
	}
	got, asked, err := c.MasterAddr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got != master.Addr {
		t.Errorf("master %s, want %s", got, master.Addr)
	}
	if asked == addrs[0] || c.Addrs()[0] != asked {
		t.Errorf("answered by %s; order now %v", asked, c.Addrs())
	}
	reps, err := c.Replicas(ctx)
	if err != nil {
		t.Fatal(err)
	}
	replica, err := set.Replica(1)
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 1 || reps[0].Addr != replica.Addr {
		t.Fatalf("replicas %+v, want one at %s", reps, replica.Addr)
	}

	// ROLE on the data nodes.
	for _, tc := range []struct {
		addr string
		kind string
	}{{master.Addr, sentinel.RoleMaster}, {replica.Addr, sentinel.RoleReplica}} {
		conn, err := redis.Dial("tcp", tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		role, err := sentinel.CheckRole(ctx, conn)
		conn.Close()
		if err != nil || role.Kind != tc.kind {
			t.Errorf("%s: role %+v, %v; want %s", tc.addr, role, err, tc.kind)
		}
	}

	// An answer that fails the check counts as that Sentinel's failure:
	// the next one is asked.
	calls := 0
	order := c.Addrs()
	next := "" // the Sentinel after the first one that answers (the dead one does not)
	for _, a := range order[1:] {
		if a != addrs[0] {
			next = a
			break
		}
	}
	got, asked, err = c.VerifiedMasterAddr(ctx, func(_ context.Context, addr string) error {
		calls++
		if calls == 1 {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil || got != master.Addr || asked != next || calls != 2 {
		t.Errorf("VerifiedMasterAddr = %s from %s after %d checks, %v; want %s from %s after 2", got, asked, calls, err, master.Addr, next)
	}
	_, _, err = c.VerifiedMasterAddr(ctx, func(context.Context, string) error { return sentinel.ErrNotMaster })
	if !errors.Is(err, sentinel.ErrNotMaster) || !errors.Is(err, sentinel.ErrNoSentinel) {
		t.Errorf("every answer rejected: %v", err)
	}

	// Unknown master: every Sentinel says so.
	u, _ := sentinel.New("nope", set.Addrs(), sentinel.Options{Password: sentinelPassword})
	_, _, err = u.MasterAddr(ctx)
	if !errors.Is(err, sentinel.ErrUnknownMaster) || !errors.Is(err, sentinel.ErrNoSentinel) {
		t.Errorf("unknown master: %v", err)
	}

	// A wrong password fails without showing either password.
	w, _ := sentinel.New("master-1", set.Addrs(), sentinel.Options{Password: "wrong-pw"})
	_, _, err = w.MasterAddr(ctx)
	if err == nil || strings.Contains(err.Error(), "wrong-pw") || strings.Contains(err.Error(), sentinelPassword) {
		t.Errorf("wrong password: %v", err)
	}
}

func TestWatchLive(t *testing.T) {
	set := redistest.StartSentinelsTB(t, redistest.SentinelOptions{Shards: 1})
	c, err := sentinel.New("master-0", set.Addrs(), sentinel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var events []sentinel.SwitchMaster
	w := c.Watch(func(_ string, ev sentinel.SwitchMaster) {
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
	})
	defer w.Close()
	waitFor(t, 10*time.Second, func() bool { return w.Connected() == 3 })
	old, _ := set.Master(0)
	replica, _ := set.Replica(0)
	if _, err := set.Sentinels[0].Do("SENTINEL", "FAILOVER", "master-0"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(events) > 0
	})
	mu.Lock()
	ev := events[0]
	mu.Unlock()
	if ev.Master != "master-0" || ev.OldAddr != old.Addr || ev.NewAddr != replica.Addr {
		t.Errorf("event %+v, want master-0 %s -> %s", ev, old.Addr, replica.Addr)
	}
	// One Sentinel killed: the others stay subscribed.
	if err := set.Sentinels[0].Kill(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, func() bool { return w.Connected() == 2 })
	// Back: the subscription is dialed again.
	if err := set.Sentinels[0].Restart(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, func() bool { return w.Connected() == 3 })
	w.Close()
	w.Close() // idempotent
	if n := w.Connected(); n != 0 {
		t.Errorf("%d subscriptions after Close", n)
	}
}

func waitFor(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

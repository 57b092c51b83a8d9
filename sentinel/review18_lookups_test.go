package sentinel_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/addrkey"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/sentinel"
)

// requireLoopbackNames skips the test unless each of names resolves to
// 127.0.0.1 alone (through the system's resolver, which the Sentinels use
// to monitor a server by name).
func requireLoopbackNames(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		ips, err := net.LookupHost(n)
		if err != nil || len(ips) != 1 || ips[0] != "127.0.0.1" {
			t.Skipf("the host name %q resolves to %v, %v: want 127.0.0.1 alone", n, ips, err)
		}
	}
}

// hangingResolver makes the lookups of host names hang until their
// context or the test ends: a resolver that does not answer.
func hangingResolver(t *testing.T) {
	t.Helper()
	stop := make(chan struct{})
	t.Cleanup(addrkey.SetLookupForTest(func(ctx context.Context, host string) ([]netip.Addr, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-stop:
			return nil, errors.New("the test ended")
		}
	}))
	t.Cleanup(func() { close(stop) }) // before the resolver is restored
}

// Four Sentinels that announce host names name servers by name ("vm:P",
// "runsc:P", on two ports), two others the master by address. With a
// resolver that does not answer, each of the four names waited its own
// DialTimeout, one after another: four times DialTimeout, past the
// caller's deadline, and the master that two Sentinels agree on failed
// its check for want of time. The names are now looked up at once: the
// lookups take one DialTimeout, and the master is found in time.
func TestReview18SentinelLookupsRunConcurrently(t *testing.T) {
	if _, err := os.Stat("/etc/hosts"); err != nil {
		t.Skip(err)
	}
	requireLoopbackNames(t, "vm", "runsc")
	set, master, name, remonitor := spellingSet(t, 6)
	stale := redistest.StartTB(t, redistest.Options{})
	s := set.Sentinels
	remonitor(s[0], "127.0.0.1", master.Port)
	remonitor(s[1], "localhost", master.Port)
	remonitor(s[2], "vm", master.Port)
	remonitor(s[3], "runsc", master.Port)
	remonitor(s[4], "vm", stale.Port)
	remonitor(s[5], "runsc", stale.Port)
	hangingResolver(t)

	const dial = 1500 * time.Millisecond
	var addrs []string
	for _, x := range s {
		addrs = append(addrs, x.Addr)
	}
	c, err := sentinel.New(name, addrs, sentinel.Options{DialTimeout: dial, ReadTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// Four lookups one after another take 6s; at once, 1.5s after the
	// last answer came.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	got, from, err := c.VerifiedMasterAddr(ctx, roleMaster)
	took := time.Since(start)
	t.Logf("VerifiedMasterAddr took %v", took)
	port := fmt.Sprintf(":%d", master.Port)
	if err != nil || !strings.HasSuffix(got, port) {
		t.Errorf("VerifiedMasterAddr = %q from %s, %v after %v; want the master (port %d), named by 2 of 6 Sentinels by address, the 4 others by names that do not resolve",
			got, from, err, took, master.Port)
	}
}

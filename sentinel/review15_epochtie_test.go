package sentinel_test

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/sentinel"
)

// configEpoch reads the config-epoch field of SENTINEL MASTER name on s
// (rendered one element a line by Do).
func configEpoch(t *testing.T, s *redistest.Server, name string) (int64, error) {
	t.Helper()
	out, err := s.Do("SENTINEL", "MASTER", name)
	if err != nil {
		return 0, err
	}
	f := strings.Split(out, "\n")
	for i := 0; i+1 < len(f); i += 2 {
		if strings.TrimSpace(f[i]) == "config-epoch" {
			return strconv.ParseInt(strings.TrimSpace(f[i+1]), 10, 64)
		}
	}
	return 0, fmt.Errorf("%s: no config-epoch in %q", s.Addr, out)
}

// waitNames waits until s names host:port for name.
func waitNames(t *testing.T, s *redistest.Server, name string, port int) {
	t.Helper()
	want := fmt.Sprintf("127.0.0.1\n%d", port)
	deadline := time.Now().Add(60 * time.Second)
	for {
		got, err := s.Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", name)
		if err == nil && got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s names %q, %v; want %q", s.Addr, got, err, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// epochTieSet builds three Sentinels after a failover: s[1] and s[2]
// followed it (config-epoch 1 or more, naming the promoted replica),
// s[0] missed it and names a stale server that still says it is a master
// (config-epoch 0). It returns the set, the promoted replica, the stale
// server and the master name.
func epochTieSet(t *testing.T) (set *redistest.SentinelSet, promoted, stale *redistest.Server, name string) {
	t.Helper()
	set = redistest.StartSentinelsTB(t, redistest.SentinelOptions{Shards: 1, Sentinels: 3})
	name = set.Names()[0]
	promoted, err := set.Replica(0)
	if err != nil {
		t.Fatal(err)
	}
	stale = redistest.StartTB(t, redistest.Options{}) // an old master, partitioned or restarted empty
	s := set.Sentinels
	// s[0] does not take part in the failover.
	if _, err := s[0].Do("SENTINEL", "REMOVE", name); err != nil {
		t.Fatal(err)
	}
	if _, err := s[1].Do("SENTINEL", "FAILOVER", name); err != nil {
		t.Fatal(err)
	}
	waitNames(t, s[1], name, promoted.Port)
	waitNames(t, s[2], name, promoted.Port)
	if _, err := s[0].Do("SENTINEL", "MONITOR", name, "127.0.0.1", strconv.Itoa(stale.Port), "2"); err != nil {
		t.Fatal(err)
	}
	waitNames(t, s[0], name, stale.Port)
	deadline := time.Now().Add(60 * time.Second)
	for {
		e0, err0 := configEpoch(t, s[0], name)
		e1, err1 := configEpoch(t, s[1], name)
		e2, err2 := configEpoch(t, s[2], name)
		if err0 == nil && err1 == nil && err2 == nil && e0 == 0 && e1 >= 1 && e2 >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("config epochs %d, %d, %d (%v, %v, %v); want 0 for the stale Sentinel, at least 1 for the others", e0, e1, e2, err0, err1, err2)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return set, promoted, stale, name
}

// With one of three Sentinels down, a stale Sentinel (it missed the
// failover) and a current one give one answer each: a one-to-one tie,
// broken by the order of the addresses. The stale Sentinel listed first
// won with the old master, which still says it is one. The tie now goes
// to the answer of the Sentinel with the highest config-epoch: the
// newer failover.
func TestReview15SentinelTieGoesToNewestConfigEpoch(t *testing.T) {
	set, promoted, stale, name := epochTieSet(t)
	s := set.Sentinels
	if err := s[2].Kill(); err != nil {
		t.Fatal(err)
	}
	c, err := sentinel.New(name, []string{s[0].Addr, s[1].Addr, s[2].Addr}, sentinel.Options{ReadTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	got, from, err := c.VerifiedMasterAddr(context.Background(), roleMaster)
	if err != nil || got != promoted.Addr {
		t.Errorf("VerifiedMasterAddr = %q from %s, %v; want %s, named by the Sentinel at config-epoch 1 or more, not the stale %s named at config-epoch 0",
			got, from, err, promoted.Addr, stale.Addr)
	}
	// MasterAddr, without the check, breaks the tie the same way.
	c2, err := sentinel.New(name, []string{s[0].Addr, s[1].Addr, s[2].Addr}, sentinel.Options{ReadTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	got, from, err = c2.MasterAddr(context.Background())
	if err != nil || got != promoted.Addr {
		t.Errorf("MasterAddr = %q from %s, %v; want %s", got, from, err, promoted.Addr)
	}
}

// Without a tie the config epochs are not asked for: a majority (two of
// three) names one master, and SENTINEL MASTER is never sent.
func TestReview15SentinelNoEpochQueryWithoutTie(t *testing.T) {
	set, promoted, _, name := epochTieSet(t)
	s := set.Sentinels
	var asked atomic.Int64
	count := func(chunk []byte) bool {
		if bytes.Contains(bytes.ToUpper(chunk), []byte("$6\r\nMASTER\r\n")) {
			asked.Add(1)
		}
		return true
	}
	var addrs []string
	for _, x := range s {
		addrs = append(addrs, redistest.StartProxy(t, x.Addr, redistest.ProxyOptions{OnSend: count}).Addr)
	}
	c, err := sentinel.New(name, addrs, sentinel.Options{ReadTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	got, from, err := c.VerifiedMasterAddr(context.Background(), roleMaster)
	if err != nil || got != promoted.Addr {
		t.Errorf("VerifiedMasterAddr = %q from %s, %v; want %s", got, from, err, promoted.Addr)
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("SENTINEL MASTER sent %d times without a tie; want 0", n)
	}
}

package sentinel_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/sentinel"
)

// spellingSet starts one master set watched by n Sentinels and returns
// it with its master, its name, and remonitor, which makes a Sentinel
// name the server at host:port (a host name needs resolve-hostnames and
// is announced as it is with announce-hostnames) and waits until it
// does.
func spellingSet(t *testing.T, n int) (set *redistest.SentinelSet, master *redistest.Server, name string, remonitor func(s *redistest.Server, host string, port int)) {
	t.Helper()
	set = redistest.StartSentinelsTB(t, redistest.SentinelOptions{Shards: 1, Sentinels: n})
	master, err := set.Master(0)
	if err != nil {
		t.Fatal(err)
	}
	name = set.Names()[0]
	if len(set.Sentinels) != n {
		t.Fatalf("%d Sentinels, want %d", len(set.Sentinels), n)
	}
	remonitor = func(s *redistest.Server, host string, port int) {
		t.Helper()
		cmds := [][]string{{"SENTINEL", "REMOVE", name}}
		if net.ParseIP(host) == nil {
			cmds = [][]string{
				{"SENTINEL", "CONFIG", "SET", "resolve-hostnames", "yes"},
				{"SENTINEL", "CONFIG", "SET", "announce-hostnames", "yes"},
				{"SENTINEL", "REMOVE", name},
			}
		}
		cmds = append(cmds, []string{"SENTINEL", "MONITOR", name, host, fmt.Sprint(port), "2"})
		for _, cmd := range cmds {
			if _, err := s.Do(cmd...); err != nil {
				t.Fatalf("%s: %v: %v", s.Addr, cmd, err)
			}
		}
		want := fmt.Sprintf("%s\n%d", host, port)
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
	return set, master, name, remonitor
}

// slowSentinel is a proxy to the Sentinel at addr that holds each
// GET-MASTER-ADDR-BY-NAME for delay: a Sentinel that answers last.
func slowSentinel(t *testing.T, addr string, delay time.Duration) string {
	t.Helper()
	done := make(chan struct{})
	p := redistest.StartProxy(t, addr, redistest.ProxyOptions{OnSend: func(chunk []byte) bool {
		if bytes.Contains(bytes.ToUpper(chunk), []byte("GET-MASTER-ADDR-BY-NAME")) {
			select {
			case <-time.After(delay):
			case <-done:
			}
		}
		return true
	}})
	t.Cleanup(func() { close(done) }) // runs before the proxy's own cleanup
	return p.Addr
}

// "localhost:P" names the server of "127.0.0.1:P" and of "[::1]:P", which
// do not name each other by their text. Each answer joined the group of
// the first answer in hand that named the same server, so the groups
// depended on which Sentinel answered first: with "localhost" last, the
// three Sentinels naming the master counted as two groups (2 and 1
// votes), and the stale master named by the two others (a Sentinel asked
// through two addresses), listed first, won the tie. The groups are now
// taken transitively, whatever the order of the answers.
func TestReview12SentinelSpellingGroupsDoNotDependOnOrder(t *testing.T) {
	set, master, _, remonitor := spellingSet(t, 4)
	stale := redistest.StartTB(t, redistest.Options{}) // an old master restarted empty
	s := set.Sentinels
	remonitor(s[0], "127.0.0.1", stale.Port)
	remonitor(s[1], "127.0.0.1", master.Port)
	remonitor(s[2], "::1", master.Port)
	remonitor(s[3], "localhost", master.Port)

	twice := redistest.StartProxy(t, s[0].Addr, redistest.ProxyOptions{})
	last := slowSentinel(t, s[3].Addr, 2*time.Second)
	c, err := sentinel.New(set.Names()[0], []string{s[0].Addr, twice.Addr, s[1].Addr, s[2].Addr, last},
		sentinel.Options{ReadTimeout: 20 * time.Second, DialTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	got, from, err := c.VerifiedMasterAddr(context.Background(), roleMaster)
	port := fmt.Sprintf(":%d", master.Port)
	if err != nil || !strings.HasSuffix(got, port) {
		t.Errorf("VerifiedMasterAddr = %q from %s, %v; want the master (port %d), named by 3 of 5 Sentinels in three spellings, not the stale %s named by 2",
			got, from, err, master.Port, stale.Addr)
	}
}

// A Sentinel that announces host names names the master by the name it
// monitors it under ("vm:P"), another by its address ("127.0.0.1:P"):
// the name was never looked up, the two answers counted as two masters,
// and a stale Sentinel listed first won the three-way tie with an old
// master that still says it is one. The name is now looked up when the
// answers differ.
func TestReview12SentinelHostNameIsLookedUp(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Skip(err)
	}
	ips, err := net.LookupHost(host)
	if err != nil || len(ips) != 1 || ips[0] != "127.0.0.1" || strings.EqualFold(host, "localhost") {
		t.Skipf("the host name %q resolves to %v, %v: want 127.0.0.1 alone", host, ips, err)
	}
	set, master, name, remonitor := spellingSet(t, 3)
	stale := redistest.StartTB(t, redistest.Options{})
	s := set.Sentinels
	remonitor(s[0], "127.0.0.1", stale.Port)
	remonitor(s[1], host, master.Port)
	remonitor(s[2], "127.0.0.1", master.Port)

	c, err := sentinel.New(name, []string{s[0].Addr, s[1].Addr, s[2].Addr}, sentinel.Options{ReadTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	got, from, err := c.VerifiedMasterAddr(context.Background(), roleMaster)
	port := fmt.Sprintf(":%d", master.Port)
	if err != nil || !strings.HasSuffix(got, port) {
		t.Errorf("VerifiedMasterAddr = %q from %s, %v; want the master (port %d), named %s:%d and %s by 2 of 3 Sentinels, not the stale %s",
			got, from, err, master.Port, host, master.Port, master.Addr, stale.Addr)
	}
}

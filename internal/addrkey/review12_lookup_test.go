package addrkey

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// Only a host name other than localhost is looked up; a name and the
// address it resolves to name one server.
func TestReview12Lookup(t *testing.T) {
	for host, want := range map[string]bool{
		"":            false,
		"127.0.0.1":   false,
		"::1":         false,
		"fe80::1%lo":  false,
		"localhost":   false,
		"LocalHost.":  false,
		"redis-1":     true,
		"redis.local": true,
	} {
		if got := NeedsLookup(host); got != want {
			t.Errorf("NeedsLookup(%q) = %t, want %t", host, got, want)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if !SameServerLookup(ctx, "localhost:1", "127.0.0.1:1") || SameServerLookup(ctx, "127.0.0.1:1", "127.0.0.1:2") {
		t.Error("SameServerLookup disagrees with Of on localhost and ports")
	}
	host, err := os.Hostname()
	if err != nil {
		t.Skip(err)
	}
	ips, err := net.LookupHost(host)
	if err != nil || len(ips) != 1 || ips[0] != "127.0.0.1" || strings.EqualFold(host, "localhost") {
		t.Skipf("the host name %q resolves to %v, %v: want 127.0.0.1 alone", host, ips, err)
	}
	if !SameServerLookup(ctx, host+":6379", "127.0.0.1:6379") || !SameServerLookup(ctx, "[::ffff:127.0.0.1]:6379", strings.ToUpper(host)+":6379") {
		t.Errorf("%s:6379 and 127.0.0.1:6379 are not one server", host)
	}
	if SameServerLookup(ctx, host+":6379", "127.0.0.1:6380") || SameServerLookup(ctx, host+":6379", "10.0.0.1:6379") {
		t.Errorf("%s:6379 matched another port or address", host)
	}
}

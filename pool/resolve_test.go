package pool

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
)

// portOf returns the server port a connection is talking to.
func portOf(t *testing.T, c redis.Conn) string {
	t.Helper()
	info, err := redis.String(c.Do("INFO", "server"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if port, ok := strings.CutPrefix(line, "tcp_port:"); ok {
			return port
		}
	}
	t.Fatalf("no tcp_port in INFO")
	return ""
}

func TestSetResolver(t *testing.T) {
	a := plainServer(t)
	b := plainServer(t)
	s, err := NewSet(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var target atomic.Pointer[string]
	resolve := func() (string, error) {
		if p := target.Load(); p != nil {
			return *p, nil
		}
		return "", ErrNoAddr
	}
	tests := []struct {
		name string
		key  string
		fn   func() (string, error)
		ok   bool
	}{
		{"name", "sentinel/shard-a", resolve, true},
		{"address as name", "127.0.0.1:6379", resolve, false},
		{"nil resolver", "x", nil, false},
	}
	for _, tt := range tests {
		err := s.SetResolver(tt.key, tt.fn)
		if (err == nil) != tt.ok {
			t.Errorf("%s: err = %v", tt.name, err)
		}
		if err != nil && !errors.Is(err, ErrBadOptions) {
			t.Errorf("%s: err = %v, want ErrBadOptions", tt.name, err)
		}
	}
	ctx := context.Background()
	// No address yet: a typed dial error naming the key.
	_, err = s.Get(ctx, "sentinel/shard-a")
	var de *DialError
	if !errors.As(err, &de) || !errors.Is(err, ErrNoAddr) || de.Addr != "sentinel/shard-a" {
		t.Fatalf("err = %v, want a DialError wrapping ErrNoAddr", err)
	}
	addrA := a.Addr
	target.Store(&addrA)
	c, err := s.Get(ctx, "sentinel/shard-a")
	if err != nil {
		t.Fatal(err)
	}
	portA := portOf(t, c)
	c.Close()
	// The address moves: connections made before stay with a until the
	// pools are removed; new ones go to b.
	addrB := b.Addr
	target.Store(&addrB)
	if err := s.Remove("sentinel/shard-a"); err != nil {
		t.Fatal(err)
	}
	c, err = s.Get(ctx, "sentinel/shard-a")
	if err != nil {
		t.Fatal(err)
	}
	portB := portOf(t, c)
	c.Close()
	if !strings.HasSuffix(addrA, ":"+portA) || !strings.HasSuffix(addrB, ":"+portB) {
		t.Errorf("ports %s then %s for %s then %s", portA, portB, addrA, addrB)
	}
	// A bad address from the resolver is a dial error, not a panic.
	bad := "nonsense"
	target.Store(&bad)
	s.Remove("sentinel/shard-a")
	if _, err := s.Get(ctx, "sentinel/shard-a"); !errors.As(err, &de) || !errors.Is(err, ErrBadAddr) {
		t.Errorf("bad address: %v", err)
	}
	// Names without a resolver are still checked as addresses.
	if _, err := s.Get(ctx, "sentinel/other"); !errors.Is(err, ErrBadAddr) {
		t.Errorf("unknown name: %v", err)
	}
}

func TestSetResolverTLS(t *testing.T) {
	srv := startServer(t, redistest.Options{TLS: true})
	s, err := NewSet(Options{TLSConfig: srv.TLS})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The certificate is checked against the resolved host (127.0.0.1).
	if err := s.SetResolver("sentinel/tls", func() (string, error) { return srv.Addr, nil }); err != nil {
		t.Fatal(err)
	}
	c, err := s.Get(context.Background(), "sentinel/tls")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Do("PING"); err != nil {
		t.Fatal(err)
	}
}

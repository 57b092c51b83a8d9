package pool

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// silentListener accepts connections and never answers, like a hung server
// or a firewall that lets SYNs through. It closes everything when the test
// ends.
func silentListener(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return l.Addr().String()
}

// closedPort returns a 127.0.0.1 address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestUnreachableIsDialError(t *testing.T) {
	addr := closedPort(t)
	set := newTestSet(t, Options{Password: "never-shown-pw"})
	start := time.Now()
	c, err := set.Get(context.Background(), addr)
	if elapsed := time.Since(start); elapsed > time.Second {
		t.Errorf("refused dial took %v", elapsed)
	}
	var de *DialError
	if c != nil || !errors.As(err, &de) || de.Addr != addr {
		t.Fatalf("Get = %v, %v; want *DialError for %s", c, err, addr)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "shardis: dial "+addr+": ") || strings.Contains(msg, "never-shown-pw") {
		t.Errorf("error %q: want prefix \"shardis: dial %s: \" and no password", msg, addr)
	}
	if errors.Is(err, ErrAuth) {
		t.Error("a refused connection is not an auth failure")
	}
	if st := set.Stats()[addr]; st.Dials != 1 || st.DialErrors != 1 || st.Active != 0 {
		t.Errorf("Stats = %+v, want Dials 1 DialErrors 1 Active 0", st)
	}
}

func TestHungServerTimesOut(t *testing.T) {
	// The TCP connect succeeds; the TLS handshake or the AUTH reply never
	// comes. DialTimeout must end the dial.
	tests := []struct {
		name string
		opts Options
	}{
		{"auth reply", Options{Password: "pw-hidden", DialTimeout: 200 * time.Millisecond}},
		{"setname reply", Options{ClientName: "x", DialTimeout: 200 * time.Millisecond, ReadTimeout: time.Minute}},
		{"tls handshake", Options{TLSConfig: insecureTLS(), DialTimeout: 200 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := silentListener(t)
			set := newTestSet(t, tt.opts)
			start := time.Now()
			_, err := set.Get(context.Background(), addr)
			elapsed := time.Since(start)
			var de *DialError
			if !errors.As(err, &de) {
				t.Fatalf("Get = %v, want *DialError", err)
			}
			if elapsed < 150*time.Millisecond || elapsed > 2*time.Second {
				t.Errorf("Get returned after %v, want about DialTimeout (200ms)", elapsed)
			}
			if strings.Contains(err.Error(), "pw-hidden") {
				t.Errorf("error %q contains the password", err)
			}
		})
	}
}

func TestCancelStopsDial(t *testing.T) {
	tests := []struct {
		name string
		opts Options
	}{
		{"during auth", Options{Password: "pw", DialTimeout: time.Minute, ReadTimeout: time.Minute}},
		{"during tls handshake", Options{TLSConfig: insecureTLS(), DialTimeout: time.Minute}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := silentListener(t)
			set := newTestSet(t, tt.opts)
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			start := time.Now()
			_, err := set.Get(ctx, addr)
			if elapsed := time.Since(start); elapsed > 2*time.Second {
				t.Errorf("Get returned %v after cancel", elapsed)
			}
			var de *DialError
			if !errors.As(err, &de) || !errors.Is(err, context.Canceled) {
				t.Errorf("Get = %v, want *DialError wrapping context.Canceled", err)
			}
		})
	}
}

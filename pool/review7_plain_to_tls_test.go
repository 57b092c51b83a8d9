package pool

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
)

// TestReview7PlainClientOnTLSServerSaysTLS: a TLS-only redis-server
// resets a plain-text connection at its first command, before any reply:
// the caller got a bare "connection reset by peer" (or EOF), from the dial
// when it sent setup commands and otherwise from its own first command,
// with no word of TLS. The error must match ErrClosedBeforeReply and name
// TLS, and still match what the network said (a *DialError from the dial).
// A connection that the server closes after replies came is no such case.
func TestReview7PlainClientOnTLSServerSaysTLS(t *testing.T) {
	srv := startServer(t, redistest.Options{TLS: true})
	bg := context.Background()
	check := func(t *testing.T, err error, wantDial bool) {
		t.Helper()
		if !errors.Is(err, ErrClosedBeforeReply) {
			t.Fatalf("error = %v, want one matching ErrClosedBeforeReply", err)
		}
		if !strings.Contains(err.Error(), "TLS") {
			t.Errorf("error %q does not mention TLS", err)
		}
		var de *DialError
		if wantDial != errors.As(err, &de) {
			t.Errorf("error %q: *DialError %v, want %v", err, !wantDial, wantDial)
		}
	}
	tests := []struct {
		name string
		opts Options
		dial bool // the dial sends a setup command, which meets the reset
	}{
		{"setup command (CLIENT SETNAME)", Options{ClientName: "plain"}, true},
		{"setup command (AUTH)", Options{Password: "never-shown-pw"}, true},
		{"the caller's first command", Options{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := newTestSet(t, tt.opts)
			for _, get := range []func() (redis.Conn, error){
				func() (redis.Conn, error) { return set.Get(bg, srv.Addr) },
				func() (redis.Conn, error) { return set.Dial(bg, srv.Addr) },
			} {
				c, err := get()
				if tt.dial {
					check(t, err, true)
					if strings.Contains(err.Error(), "never-shown-pw") {
						t.Errorf("error %q shows the password", err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("a dial with no setup command failed: %v", err)
				}
				_, err = c.Do("PING")
				c.Close()
				check(t, err, false)
			}
		})
	}

	t.Run("closed after a reply", func(t *testing.T) {
		plain := plainServer(t)
		set := newTestSet(t, Options{})
		c, err := set.Get(bg, plain.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		id, err := redis.Int64(c.Do("CLIENT", "ID"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := adminConn(t, plain).Do("CLIENT", "KILL", "ID", id); err != nil {
			t.Fatal(err)
		}
		_, err = c.Do("PING")
		if err == nil || errors.Is(err, ErrClosedBeforeReply) {
			t.Errorf("PING on a killed connection = %v, want an error not matching ErrClosedBeforeReply", err)
		}
	})
}

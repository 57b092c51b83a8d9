package pool

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// TestOnBorrowPingReplacesRefusedConns exercises the PING of TestOnBorrow
// itself, which a closed socket never reaches (the peek catches those
// first): the connection stays open, but its user loses the right to PING
// (ACL SETUSER alice -ping). A pool that pings idle connections finds that
// out, drops the connection and dials a new one; a pool that does not ping
// hands the old one out. Either way the SET that follows works, since only
// PING was taken away.
func TestOnBorrowPingReplacesRefusedConns(t *testing.T) {
	tests := []struct {
		name         string
		testOnBorrow time.Duration
		wantDials    int64
		wantDenied   bool // the server logged a refused PING
	}{
		{"ping every idle conn", time.Nanosecond, 2, true},
		{"never ping", Never, 1, false},
		{"idle less than TestOnBorrow", time.Hour, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := aclServer(t, false)
			admin := adminConn(t, srv, redis.DialUsername("alice"), redis.DialPassword("s3cret"))
			set := newTestSet(t, Options{TestOnBorrow: tt.testOnBorrow, Username: "alice", Password: "s3cret"})
			ctx := context.Background()
			c, err := set.Get(ctx, srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Do("SET", "k", "before"); err != nil {
				t.Fatal(err)
			}
			c.Close()

			if _, err := admin.Do("ACL", "SETUSER", "alice", "-ping"); err != nil {
				t.Fatal(err)
			}
			if _, err := admin.Do("ACL", "LOG", "RESET"); err != nil {
				t.Fatal(err)
			}
			c, err = set.Get(ctx, srv.Addr)
			if err != nil {
				t.Fatalf("Get after PING was denied: %v", err)
			}
			_, err = c.Do("SET", "k", "after")
			c.Close()
			if err != nil {
				t.Fatalf("SET: %v", err)
			}
			if st := set.Stats()[srv.Addr]; st.Dials != tt.wantDials {
				t.Errorf("Stats = %+v, want %d dials", st, tt.wantDials)
			}
			log, err := redis.Values(admin.Do("ACL", "LOG"))
			if err != nil {
				t.Fatal(err)
			}
			denied := false
			for _, entry := range log {
				kv, _ := redis.Values(entry, nil)
				for i := 0; i+1 < len(kv); i += 2 {
					k, _ := redis.String(kv[i], nil)
					v, _ := redis.String(kv[i+1], nil)
					denied = denied || (k == "object" && strings.EqualFold(v, "ping"))
				}
			}
			if denied != tt.wantDenied {
				t.Errorf("ACL LOG shows a refused PING: %v, want %v (%d entries)", denied, tt.wantDenied, len(log))
			}
		})
	}
}

// TestIdlePastReadTimeout: a connection idle for longer than ReadTimeout
// (its last reply's read deadline long passed) is still a good connection
// and the next Get hands it out instead of dialing, unless the server
// closed it meanwhile.
func TestIdlePastReadTimeout(t *testing.T) {
	tests := []struct {
		name      string
		kill      bool // the server closes the idle connection
		wantDials int64
	}{
		{"kept by the server", false, 1},
		{"closed by the server", true, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := plainServer(t)
			admin := adminConn(t, srv)
			const readTimeout = 250 * time.Millisecond // a PING answers well within it on a loaded machine
			set := newTestSet(t, Options{ReadTimeout: readTimeout, TestOnBorrow: Never})
			ctx := context.Background()
			for i := 0; i < 3; i++ {
				c, err := set.Get(ctx, srv.Addr)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := c.Do("PING"); err != nil {
					t.Fatalf("use %d: %v", i, err)
				}
				c.Close()
				time.Sleep(2 * readTimeout) // idle past the deadline of the PING's reply
				if tt.kill {
					if _, err := admin.Do("CLIENT", "KILL", "TYPE", "normal"); err != nil { // all but admin
						t.Fatal(err)
					}
				}
			}
			if st := set.Stats()[srv.Addr]; st.Dials != tt.wantDials {
				t.Fatalf("%d dials for three uses, want %d", st.Dials, tt.wantDials)
			}
		})
	}
}

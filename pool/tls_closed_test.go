package pool

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// TestTLSConnClosedByServerIsNotHandedOut: a server closing a TLS
// connection sends close_notify first, so bytes wait on the socket as
// they do for a session ticket. The borrow check must tell the two apart:
// a connection the server closed (CLIENT KILL) is not handed out (its
// caller's command would fail, a write with an unknown outcome), and an
// idle one the server keeps is handed out again, not redialled.
func TestTLSConnClosedByServerIsNotHandedOut(t *testing.T) {
	srv := aclServer(t, true)
	set := newTestSet(t, Options{TLSConfig: srv.TLS, Username: "alice", Password: "s3cret", TestOnBorrow: time.Hour})
	admin := adminConn(t, srv, redis.DialUsername("alice"), redis.DialPassword("s3cret"))
	ctx := context.Background()
	clientID := func() int64 {
		t.Helper()
		c, err := set.Get(ctx, srv.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		id, err := redis.Int64(c.Do("CLIENT", "ID"))
		if err != nil {
			t.Fatalf("CLIENT ID: %v", err)
		}
		return id
	}

	first := clientID()
	if again := clientID(); again != first {
		t.Fatalf("an idle TLS connection the server keeps was redialled: CLIENT ID %d, then %d", first, again)
	}

	if _, err := admin.Do("CLIENT", "KILL", "ID", first); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		list, err := redis.String(admin.Do("CLIENT", "LIST"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(list, fmt.Sprintf("id=%d ", first)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the killed client is still listed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if next := clientID(); next == first {
		t.Fatal("the killed connection was handed out")
	}
}

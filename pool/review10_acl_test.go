package pool

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// TestReview10ACLClosingItselfIsNotHandedOn: ACL DELUSER of the
// connection's own user, and ACL LOAD (which drops the clients of users
// it removes, and before Redis 7.2 every client), make the server close
// the connection that sends them once the reply is out, as QUIT does: a
// close that may not have arrived when the connection is borrowed again
// at once. Handed on, the next caller's command went to a connection
// the server ignores and failed (EOF, reset) for no fault of the node.
func TestReview10ACLClosingItselfIsNotHandedOn(t *testing.T) {
	acl := filepath.Join(t.TempDir(), "users.acl")
	const users = "user default on nopass ~* &* +@all\nuser app on >pw ~* &* +@all\n"
	if err := os.WriteFile(acl, []byte(users), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := plainServer(t, "--aclfile", acl)
	const rounds = 200

	// Deleted, the user can no longer log in: a Get right after the
	// DELUSER can only succeed by handing the closing connection on.
	for _, args := range [][]any{{"DELUSER", "app"}, {"deluser", "nobody", "app"}} {
		t.Run("ACL "+args[0].(string), func(t *testing.T) {
			set := newTestSet(t, Options{Username: "app", Password: "pw", TestOnBorrow: Never})
			ctx := context.Background()
			handedOn := 0
			for range rounds {
				c, err := set.Get(ctx, srv.Addr)
				if err != nil {
					t.Fatal(err)
				}
				if n, err := redis.Int(c.Do("ACL", args...)); err != nil || n != 1 {
					t.Fatalf("ACL %v = %d, %v, want 1", args, n, err)
				}
				c.Close()
				c, err = set.Get(ctx, srv.Addr)
				if err == nil {
					handedOn++
					c.Close()
				} else if !errors.Is(err, ErrAuth) {
					t.Fatalf("Get after the user was deleted: %v, want an *AuthError", err)
				}
				// The user back, for the next round's dial.
				admin, err := redis.Dial("tcp", srv.Addr)
				if err != nil {
					t.Fatal(err)
				}
				_, err = admin.Do("ACL", "SETUSER", "app", "on", ">pw", "~*", "&*", "+@all")
				admin.Close()
				if err != nil {
					t.Fatal(err)
				}
			}
			if handedOn > 0 {
				t.Errorf("%d of %d Gets right after ACL %v got a connection: the one that deleted its own user was handed on", handedOn, rounds, args)
			}
		})
	}

	t.Run("ACL LOAD", func(t *testing.T) {
		set := newTestSet(t, Options{Username: "app", Password: "pw", TestOnBorrow: Never})
		failed, firstErr := nextBorrowFailures(t, set, srv.Addr, rounds, func(c redis.Conn, _ int) {
			if reply, err := c.Do("ACL", "LOAD"); err != nil || reply != "OK" {
				t.Fatalf("ACL LOAD = %v, %v", reply, err)
			}
		}, "SET", "k", "v")
		if failed > 0 {
			t.Errorf("%d of %d commands borrowed right after an ACL LOAD failed, the first with: %v", failed, rounds, firstErr)
		}
	})
}

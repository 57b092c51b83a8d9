package pool

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// Idle pooled connections that the server kills (CLIENT KILL TYPE normal
// or USER, from another connection: an operator's, a failover script's)
// are never handed to the next caller: its command goes out on a live
// connection and succeeds, even when it is borrowed right after the kill
// returned.
func TestReview16IdleConnectionsKilledAreNotHandedOn(t *testing.T) {
	for _, tlsOn := range []bool{false, true} {
		for _, via := range []string{"admin", "set"} {
			for _, kill := range [][]any{
				{"KILL", "TYPE", "normal"},
				{"KILL", "USER", "alice"},
			} {
				for _, borrowPing := range []time.Duration{Never, time.Millisecond} {
					name := fmt.Sprintf("tls=%v/%s/%v/TestOnBorrow=%v", tlsOn, via, kill[2], borrowPing)
					t.Run(name, func(t *testing.T) {
						srv := aclServer(t, tlsOn)
						admin := adminConn(t, srv, redis.DialUsername("alice"), redis.DialPassword("s3cret"))
						set := newTestSet(t, Options{Username: "alice", Password: "s3cret", TLSConfig: srv.TLS, TestOnBorrow: borrowPing})
						ctx := context.Background()
						const idle, rounds = 4, 100
						failed := 0
						var first error
						for i := range rounds {
							// Fill the pool with idle connections.
							conns := make([]redis.Conn, idle)
							for j := range conns {
								c, err := set.Get(ctx, srv.Addr)
								if err != nil {
									t.Fatal(err)
								}
								if _, err := c.Do("PING"); err != nil {
									t.Fatal(err)
								}
								conns[j] = c
							}
							for _, c := range conns {
								c.Close()
							}
							killer := admin
							if via == "set" {
								// Sent on a pooled connection: the others
								// are killed, the sender kept (SKIPME yes).
								c, err := set.Get(ctx, srv.Addr)
								if err != nil {
									t.Fatal(err)
								}
								killer = c
							}
							n, err := redis.Int(killer.Do("CLIENT", kill...))
							if killer != admin {
								killer.Close()
							}
							if err != nil {
								t.Fatal(err)
							}
							if via == "set" {
								n++ // the killer's own connection, retired by the pool
							}
							if n < idle {
								t.Fatalf("CLIENT %v killed %d connections, want at least %d", kill, n, idle)
							}
							c, err := set.Get(ctx, srv.Addr)
							if err != nil {
								t.Fatal(err)
							}
							if _, err := c.Do("GET", fmt.Sprintf("k%d", i)); err != nil {
								failed++
								if first == nil {
									first = err
								}
							}
							c.Close()
						}
						if failed > 0 {
							t.Errorf("%d of %d commands borrowed right after the idle connections were killed failed, the first with: %v", failed, rounds, first)
						}
					})
				}
			}
		}
	}
}

package shard_test

import (
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"
)

// TestReview18ConnWatchOutlivesRefusedMultiAsOnOneServer: on one
// connection to Redis, keys watched before a MULTI that the server
// refused (its ACL user may not run MULTI) stay watched, the EXEC after
// it being refused as one without MULTI: the connection's next
// MULTI ... EXEC is aborted once another client changed such a key, and
// an UNWATCH in between ends the watch. A Conn used for the next
// transaction must behave the same whether the refused MULTI and its
// EXEC were sent one Do at a time or together (the MULTI's refusal read
// only after the EXEC was sent): each case runs on a plain connection to
// the server, whose answer is the expected one, and on a Conn.
func TestReview18ConnWatchOutlivesRefusedMultiAsOnOneServer(t *testing.T) {
	c, server := noMultiRing(t)
	const watched = "r18crw:w"
	refusedTx := map[string]func(t *testing.T, conn redis.Conn){
		"one Do at a time": func(t *testing.T, conn redis.Conn) {
			_, err := conn.Do("MULTI")
			require.ErrorContains(t, err, "NOPERM")
			_, err = conn.Do("SET", watched+":q", "v")
			require.NoError(t, err) // no transaction: it runs
			_, err = conn.Do("EXEC")
			require.ErrorContains(t, err, "EXEC without MULTI")
		},
		"sent together": func(t *testing.T, conn redis.Conn) {
			require.NoError(t, conn.Send("MULTI"))
			require.NoError(t, conn.Send("SET", watched+":q", "v"))
			_, err := conn.Do("EXEC")
			require.ErrorContains(t, err, "NOPERM") // Do returns the first error reply
		},
	}
	for txName, refused := range refusedTx {
		for _, unwatch := range []bool{false, true} {
			name := txName
			if unwatch {
				name += ", then UNWATCH"
			}
			t.Run(name, func(t *testing.T) {
				run := func(conn redis.Conn) (any, error) {
					_, err := server.Do("ACL", "SETUSER", "nomulti", "-multi")
					require.NoError(t, err)
					_, err = conn.Do("WATCH", watched)
					require.NoError(t, err)
					refused(t, conn)
					if unwatch {
						_, err = conn.Do("UNWATCH")
						require.NoError(t, err)
					}
					_, err = server.Do("ACL", "SETUSER", "nomulti", "+multi")
					require.NoError(t, err)
					_, err = server.Do("INCR", watched) // another client changes the key
					require.NoError(t, err)
					require.NoError(t, conn.Send("MULTI"))
					require.NoError(t, conn.Send("SET", watched+":next", "v"))
					return conn.Do("EXEC")
				}

				plain, err := redis.Dial("tcp", server.Addr, redis.DialUsername("nomulti"), redis.DialPassword("nomultipw"))
				require.NoError(t, err)
				defer plain.Close()
				want, wantErr := run(plain)
				require.NoError(t, wantErr, "the plain connection's EXEC")
				if unwatch {
					require.Equal(t, []any{"OK"}, want, "the server ran the transaction after UNWATCH")
				} else {
					require.Nil(t, want, "the server aborted the transaction: the key stayed watched")
				}

				conn := c.Conn()
				defer conn.Close()
				got, err := run(conn)
				require.NoError(t, err, "the Conn's EXEC")
				if want == nil {
					require.Nil(t, got, "the Conn ran a transaction that one connection to the server aborts: it forgot the WATCH still in force")
				} else {
					require.Equal(t, []any{"OK"}, got)
				}
			})
		}
	}
}

package shard_test

import (
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview14ConnDeferredMultiRefusal: a Conn answers a MULTI sent
// before any key itself (OK), and sends it to the node of the first key,
// in front of that command. When the server refuses that MULTI (its ACL
// user may not run it), the caller, told OK, must get the server's
// refusal for the commands it believes queued and for EXEC, and none of
// them may run at once outside a transaction. A user that may run MULTI
// but not a queued command gets that command's NOPERM, and EXEC fails
// (EXECABORT) without running the rest.
func TestReview14ConnDeferredMultiRefusal(t *testing.T) {
	server := redistest.StartTB(t, redistest.Options{})
	_, err := server.Do("ACL", "SETUSER", "r14dmnomulti", "on", ">pw", "~*", "&*", "+@all", "-multi")
	require.NoError(t, err)
	_, err = server.Do("ACL", "SETUSER", "r14dmnoset", "on", ">pw", "~*", "&*", "+@all", "-set")
	require.NoError(t, err)

	for _, tc := range []struct {
		user, key string
		refused   string // the command whose NOPERM the caller must see
	}{
		{"r14dmnomulti", "r14dm:a", "multi"},
		{"r14dmnoset", "r14dm:b", "set"},
	} {
		t.Run(tc.user, func(t *testing.T) {
			cfg := ringConfig([]*redistest.Server{server})
			cfg.Pool.Username, cfg.Pool.Password = tc.user, "pw"
			cfg.Health.Interval = -1
			c := newClient(t, cfg)
			conn := c.Conn()
			defer conn.Close()

			_, err := conn.Do("MULTI")
			require.NoError(t, err) // answered by the Conn: no key known yet
			_, incrErr := conn.Do("INCR", tc.key+":n")
			_, setErr := conn.Do("SET", tc.key, "v")
			_, execErr := conn.Do("EXEC")
			t.Logf("INCR: %v; SET: %v; EXEC: %v", incrErr, setErr, execErr)

			// Nothing of the transaction ran.
			n, err := server.Do("EXISTS", tc.key+":n", tc.key)
			require.NoError(t, err)
			assert.Equal(t, "0", n, "a command the caller believed queued ran at once")

			require.Error(t, execErr, "EXEC")
			assert.NotContains(t, execErr.Error(), "without MULTI", "EXEC")
			switch tc.refused {
			case "multi":
				requireNoPerm(t, incrErr, "INCR after the refused MULTI")
				requireNoPerm(t, setErr, "SET after the refused MULTI")
				requireNoPerm(t, execErr, "EXEC after the refused MULTI")
				assert.Contains(t, execErr.Error(), "multi", "EXEC's error names the refused command")
			case "set":
				assert.NoError(t, incrErr, "INCR queued")
				requireNoPerm(t, setErr, "SET")
				assert.Contains(t, execErr.Error(), "EXECABORT")
			}

			// The Conn is out of the transaction: its next commands run.
			v, err := redis.Int(conn.Do("INCR", tc.key+":m"))
			require.NoError(t, err)
			assert.Equal(t, 1, v)
		})
	}
}

package reshard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// commandCalls returns INFO commandstats of the server at addr: calls per
// command ("get", "client|setname").
func commandCalls(t *testing.T, addr string) map[string]string {
	t.Helper()
	conn, err := redis.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	info, err := redis.String(conn.Do("INFO", "commandstats"))
	require.NoError(t, err)
	out := map[string]string{}
	for line := range strings.SplitSeq(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if cmd, isCmd := strings.CutPrefix(name, "cmdstat_"); ok && isCmd {
			calls, _, _ := strings.Cut(rest, ",")
			out[cmd] = calls
		}
	}
	return out
}

// writeFlagged reports whether the server flags command (or
// "command|subcommand") as a write (COMMAND INFO).
func writeFlagged(t *testing.T, addr, command string) bool {
	t.Helper()
	conn, err := redis.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	infos, err := redis.Values(conn.Do("COMMAND", "INFO", command))
	require.NoError(t, err)
	require.Len(t, infos, 1)
	info, err := redis.Values(infos[0], nil)
	require.NoError(t, err, "COMMAND INFO %s", command)
	require.GreaterOrEqual(t, len(info), 3)
	flags, err := redis.Strings(info[2], nil)
	require.NoError(t, err)
	for _, f := range flags {
		if f == "write" {
			return true
		}
	}
	return false
}

// TestReview9DryRunRunsNoWriteCommand: a dry run counts what would move
// and changes nothing, on either side: no command the servers flag as a
// write runs on any node (no fence marker, no MIGRATE, no DEL), whatever
// else it reads.
func TestReview9DryRunRunsNoWriteCommand(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	names := []string{"s0", "s1", "s2"}
	from, to := mustParse(t, ringURL(servers[:2], names[:2], nil)), mustParse(t, ringURL(servers, names, nil))
	c := newClient(t, from)
	for i := range 300 {
		_, err := c.Do(ctx, "SET", fmt.Sprint("dryw:", i), i, "EX", 600)
		require.NoError(t, err)
	}
	before := make([]map[string]string, len(servers))
	for i, s := range servers {
		before[i] = commandCalls(t, s.Addr)
	}
	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, DryRun: true, BytesPerSecond: 1 << 20})
	require.NoError(t, err)
	require.Positive(t, rep.Moved, "the dry run found keys to move")
	for i, s := range servers {
		after := commandCalls(t, s.Addr)
		require.NotEmpty(t, after)
		for cmd, calls := range after {
			if calls == before[i][cmd] || cmd == "info" || cmd == "command|info" {
				continue // not run by the dry run, or this test's own
			}
			assert.False(t, writeFlagged(t, s.Addr, cmd), "the dry run ran %s on %s", cmd, names[i])
		}
	}
}

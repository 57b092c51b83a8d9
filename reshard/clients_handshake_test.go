package reshard

import (
	"errors"
	"testing"
	"time"

	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A shardis client's connection is unnamed for a moment after its dial
// (before CLIENT SETNAME): judgeClients lets such a connection, which has
// sent no command yet, pass for handshakeGrace, and reports it after.
func TestJudgeClientsWaitsOutAHandshake(t *testing.T) {
	info := shard.MigrationInfo{FromID: "ring-a", ToID: "ring-b"}
	idle := clientEntry{node: "n1", id: "7", addr: "127.0.0.1:5000", flags: "N", cmd: "NULL"}
	busy := clientEntry{node: "n1", id: "8", addr: "127.0.0.1:5001", flags: "N", cmd: "get"}
	authed := clientEntry{node: "n1", id: "7", addr: "127.0.0.1:5000", flags: "N", cmd: "auth"}
	helloed := clientEntry{node: "n1", id: "7", addr: "127.0.0.1:5000", flags: "N", cmd: "hello"}
	cases := []struct {
		name    string
		entries []clientEntry
		fresh   freshConns
		age     time.Duration // since the idle connection was first seen
		report  []string      // ids reported
		pending bool
	}{
		{name: "first seen", entries: []clientEntry{idle}, fresh: freshConns{}, pending: true},
		{name: "within the grace", entries: []clientEntry{idle}, fresh: freshConns{}, age: handshakeGrace / 2, pending: true},
		{name: "past the grace", entries: []clientEntry{idle}, fresh: freshConns{}, age: 2 * handshakeGrace, report: []string{"7"}},
		{name: "no grace without fresh", entries: []clientEntry{idle}, report: []string{"7"}},
		{name: "an unnamed connection that sent a command", entries: []clientEntry{busy, idle}, fresh: freshConns{},
			report: []string{"8"}, pending: true},
		// With a password the pool sends AUTH, and waits for its reply,
		// before CLIENT SETNAME: cmd=auth is still the handshake.
		{name: "authenticated, within the grace", entries: []clientEntry{authed}, fresh: freshConns{}, pending: true},
		{name: "authenticated, past the grace", entries: []clientEntry{authed}, fresh: freshConns{}, age: 2 * handshakeGrace, report: []string{"7"}},
		{name: "HELLO, within the grace", entries: []clientEntry{helloed}, fresh: freshConns{}, pending: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.age > 0 {
				tc.fresh["n1 7"] = time.Now().Add(-tc.age)
			}
			err := judgeClients(tc.entries, info, false, tc.fresh)
			assert.Equal(t, tc.pending, tc.fresh.pending(), "pending")
			if tc.report == nil {
				require.NoError(t, err)
				return
			}
			var ce *ClientsError
			require.True(t, errors.As(err, &ce), "%v", err)
			var ids []string
			for _, c := range ce.Conns {
				ids = append(ids, c.ID)
				assert.Contains(t, c.Reason, "not named by a shardis client")
			}
			assert.Equal(t, tc.report, ids)
		})
	}
}

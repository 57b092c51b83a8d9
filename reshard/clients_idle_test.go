package reshard_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckClientsRefusesAnIdleUnnamedConnection: a connection that has
// sent nothing may be a shardis client in its handshake, so the check
// looks again, but one that stays so is reported (it may be a service
// that routes by the old placement and has not sent its first command).
func TestCheckClientsRefusesAnIdleUnnamedConnection(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	from := mustParse(t, ringURL(servers[:1], []string{"s0"}, nil))
	to := mustParse(t, ringURL(servers, []string{"s0", "s1"}, nil))
	raw, err := net.Dial("tcp", servers[0].Addr)
	require.NoError(t, err)
	defer raw.Close()
	start := time.Now()
	err = reshard.CheckClients(ctx, from, to, false)
	var ce *reshard.ClientsError
	require.ErrorAs(t, err, &ce)
	require.Len(t, ce.Conns, 1)
	assert.Equal(t, raw.LocalAddr().String(), ce.Conns[0].Addr)
	assert.Contains(t, ce.Conns[0].Reason, "not named by a shardis client")
	assert.GreaterOrEqual(t, time.Since(start), 500*time.Millisecond, "judged after the handshake's grace")
	require.NoError(t, reshard.CheckClients(ctx, from, to, true), "allowed unnamed")
}

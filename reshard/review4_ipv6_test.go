package reshard_test

import (
	"context"
	"fmt"
	"net"
	"testing"

	"github.com/shardis/shardis/reshard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMoveMigratesToABracketedAddress checks that the mover gives MIGRATE
// the host of a new node's address without the brackets of the
// host:port form ("[fd00::1]:6379", as Go writes IPv6 addresses): the old
// node would fail to connect to "[fd00::1]", and every batch would fall
// back to DUMP/RESTORE, pausing the old node's writes for each. The
// address given here through Options.Addrs is the loopback's in brackets,
// which Go reads as IPv6 addresses are read.
func TestMoveMigratesToABracketedAddress(t *testing.T) {
	ctx := context.Background()
	servers, from, to := moveAll(t)
	for i := 0; i < 10; i++ {
		_, err := servers[0].Do("SET", fmt.Sprintf("b:%d", i), fmt.Sprint(i))
		require.NoError(t, err)
	}
	_, port, err := net.SplitHostPort(servers[1].Addr)
	require.NoError(t, err)
	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true,
		Addrs: map[string]string{servers[1].Addr: "[127.0.0.1]:" + port}})
	require.NoError(t, err)
	assert.Equal(t, int64(10), rep.Moved)
	stats, err := servers[0].Do("INFO", "commandstats")
	require.NoError(t, err)
	assert.Contains(t, stats, "cmdstat_migrate:", "the keys moved with MIGRATE")
	assert.NotContains(t, stats, "cmdstat_dump:", "not with DUMP/RESTORE: MIGRATE failed to connect")
}

package reshard_test

import (
	"context"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Under the twemproxy-style tag rule "::" every name of the reserved
// family "shardis:migration:..." hashes its tag "migration", so probe
// names routed by the rings themselves all go from one old node to one
// new node. Every old node sends keys to both new nodes here; the new node
// that the family's tag does not go to is reached, through ArmOptions.Addrs,
// at a server that refuses MIGRATE's AUTH2. Arm must find that pair too
// and refuse with a *ProbeError naming it, nothing armed.
func TestReview14ArmProbesEveryPairUnderAColonTag(t *testing.T) {
	ctx := context.Background()
	users := []redistest.User{{Name: tlsUser, Password: tlsSecret}}
	servers := redistest.StartNTB(t, 4, redistest.Options{Users: users})
	from := mustParse(t, ringURL(servers[:2], []string{"s0", "s1"}, nil)+"&tag=::")
	to := mustParse(t, ringURL(servers[2:], []string{"s2", "s3"}, nil)+"&tag=::")
	for _, c := range []*shard.Config{&from, &to} {
		c.Pool.Username, c.Pool.Password = tlsUser, tlsSecret
	}
	require.Equal(t, "::", to.RingConfig().Tag)
	// The new node that keys of the reserved family do not go to.
	bad := servers[2]
	if owner(t, to, "shardis:migration:x") == bad.Addr {
		bad = servers[3]
	}
	c, moving := unarmedMigratingClient(t, from, to, "k", 300)
	toBad := map[string]bool{}
	for _, k := range moving {
		if owner(t, to, k) == bad.Addr {
			toBad[owner(t, from, k)] = true
		}
	}
	require.NotEmpty(t, toBad, "keys move to the refusing node")

	other := redistest.StartNTB(t, 1, redistest.Options{Users: []redistest.User{{Name: tlsUser, Password: "another-pass-14"}}})
	err := reshard.Arm(ctx, from, to, reshard.ArmOptions{SkipClientCheck: true, Addrs: map[string]string{bad.Addr: other[0].Addr}})
	require.ErrorIs(t, err, reshard.ErrMigrateProbe)
	var pe *reshard.ProbeError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, bad.Addr, pe.To.Addr)
	assert.True(t, toBad[pe.From.Addr], "an old node that keys move to %s from: %s", bad.Addr, pe.From.Addr)
	assert.Equal(t, other[0].Addr, pe.Target)
	assert.Contains(t, err.Error(), "WRONGPASS")

	info, _ := c.Migration()
	assert.Equal(t, shard.PhaseWaiting, info.Phase, "not armed")
	for _, s := range servers {
		assert.Empty(t, probeKeys(t, s), "%s: probe keys left", s.Addr)
	}
}

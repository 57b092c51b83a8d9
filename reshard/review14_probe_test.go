package reshard_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// probeKeys returns the keys of s named as the probe's (KEYS: the test
// servers hold a few hundred keys).
func probeKeys(t *testing.T, s *redistest.Server) []string {
	t.Helper()
	reply, err := s.Do("KEYS", "shardis:migration:probe:*")
	require.NoError(t, err)
	return strings.Fields(reply)
}

// unarmedMigratingClient fills from with n keys of prefix and returns a
// client in migration mode from from to to whose beacons the old nodes
// show (the fence not armed), and the keys that move.
func unarmedMigratingClient(t *testing.T, from, to shard.Config, prefix string, n int) (*shard.Client, []string) {
	t.Helper()
	ctx := context.Background()
	fill(t, from, prefix, n)
	var moving []string
	for i := 0; i < n; i++ {
		if k := fmt.Sprintf("%s:%d", prefix, i); owner(t, from, k) != owner(t, to, k) {
			moving = append(moving, k)
		}
	}
	require.NotEmpty(t, moving)
	mig := to
	mig.Pool.ClientName = shard.AutoClientName
	f := from
	mig.Migration = &shard.Migration{From: &f}
	c := newClient(t, mig)
	_, err := c.Do(ctx, "GET", prefix+":0")
	require.NoError(t, err)
	waitFor(t, 10*time.Second, "the beacons", func() bool {
		return reshard.CheckClients(ctx, from, to, false) == nil
	})
	return c, moving
}

// serverOf returns the server of servers at addr.
func serverOf(t *testing.T, servers []*redistest.Server, addr string) *redistest.Server {
	t.Helper()
	for _, s := range servers {
		if s.Addr == addr {
			return s
		}
	}
	t.Fatalf("no server at %s", addr)
	return nil
}

// Old nodes that cannot MIGRATE to TLS-only new nodes (no tls-cluster
// yes) make Arm, and Move, refuse before the fence: nothing armed, the
// migrating client keeps working by the old topology (a moving key is
// written at its old owner), the error names the nodes, the server's
// reply and tls-cluster yes, and no probe key is left behind.
func TestReview14ArmRefusesOldNodesThatCannotMigrate(t *testing.T) {
	ctx := context.Background()
	servers, from, to := startTLSRing(t)
	c, moving := unarmedMigratingClient(t, from, to, "k", 300)

	err := reshard.Arm(ctx, from, to, reshard.ArmOptions{SkipClientCheck: true})
	require.ErrorIs(t, err, reshard.ErrMigrateProbe)
	var pe *reshard.ProbeError
	require.ErrorAs(t, err, &pe)
	assert.Contains(t, []string{servers[0].Addr, servers[1].Addr}, pe.From.Addr)
	assert.Contains(t, []string{servers[0].Addr, servers[1].Addr, servers[2].Addr}, pe.To.Addr)
	assert.NotEqual(t, pe.From.Addr, pe.To.Addr)
	assert.Contains(t, err.Error(), "IOERR", "the server's reply")
	assert.Contains(t, err.Error(), "tls-cluster yes")
	assert.Contains(t, err.Error(), "not armed")
	for _, text := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)} {
		assert.NotContains(t, text, tlsSecret)
	}

	_, err = reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true})
	require.ErrorIs(t, err, reshard.ErrMigrateProbe, "Move arms, and refuses likewise")
	_, err = reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true, Dump: true})
	require.ErrorIs(t, err, reshard.ErrMigrateProbe, "the processes MIGRATE also when the mover does not")

	info, _ := c.Migration()
	assert.Equal(t, shard.PhaseWaiting, info.Phase, "not armed")
	for _, s := range servers[:2] {
		v, err := s.Do("EXISTS", shard.FenceKey(info.FromID, info.ToID))
		require.NoError(t, err)
		assert.Equal(t, "0", v, "%s: no fence's marker", s.Addr)
	}
	// The client routes by the old topology: the write lands at the old
	// owner, nothing moved.
	_, err = c.Do(ctx, "SET", moving[0], "written")
	require.NoError(t, err)
	v, err := serverOf(t, servers, owner(t, from, moving[0])).Do("GET", moving[0])
	require.NoError(t, err)
	assert.Equal(t, "written", v)
	n, err := servers[2].Do("DBSIZE")
	require.NoError(t, err)
	assert.Equal(t, "0", n, "nothing reached the new node")
	for _, s := range servers {
		assert.Empty(t, probeKeys(t, s), "%s: probe keys left", s.Addr)
	}
}

// With tls-cluster yes the probe passes, the fence is armed and no
// probe key is left on any node.
func TestReview14ArmProbesAndLeavesNothingWithTLSCluster(t *testing.T) {
	ctx := context.Background()
	servers, from, to := startTLSRing(t, "--tls-cluster", "yes")
	c, _ := unarmedMigratingClient(t, from, to, "k", 300)
	before := commandCount(t, servers[0], "migrate") + commandCount(t, servers[1], "migrate")
	require.NoError(t, reshard.Arm(ctx, from, to, reshard.ArmOptions{SkipClientCheck: true}))
	waitArmed(t, c, "the armed fence")
	after := commandCount(t, servers[0], "migrate") + commandCount(t, servers[1], "migrate")
	// From two old nodes to the new one at least (and between the old
	// ones where keys move so).
	assert.GreaterOrEqual(t, after-before, 2, "the probe's MIGRATEs")
	for _, s := range servers {
		assert.Empty(t, probeKeys(t, s), "%s: probe keys left", s.Addr)
	}
	n, err := servers[2].Do("DBSIZE")
	require.NoError(t, err)
	assert.Equal(t, "0", n, "the probe left nothing at the new node")
}

// Plain TCP with a password: the probe passes and leaves nothing. A new
// node whose user has another password than the one To gives is refused
// before the probe (the mover cannot log in there either); one that the
// old nodes reach, through ArmOptions.Addrs, at a server that refuses
// MIGRATE's AUTH2 makes Arm refuse with a *ProbeError naming the nodes,
// the address and WRONGPASS, without the password. Nothing is armed.
func TestReview14ArmProbeWithPasswords(t *testing.T) {
	ctx := context.Background()
	users := []redistest.User{{Name: tlsUser, Password: tlsSecret}}
	servers := redistest.StartNTB(t, 4, redistest.Options{Users: users})
	names := []string{"s0", "s1", "s2"}
	from := mustParse(t, ringURL(servers[:2], names[:2], nil))
	to := mustParse(t, ringURL(servers[:3], names, nil))
	for _, c := range []*shard.Config{&from, &to} {
		c.Pool.Username, c.Pool.Password = tlsUser, tlsSecret
	}
	c, _ := unarmedMigratingClient(t, from, to, "k", 300)
	require.NoError(t, reshard.Arm(ctx, from, to, reshard.ArmOptions{SkipClientCheck: true}))
	waitArmed(t, c, "the armed fence")
	for _, s := range servers {
		assert.Empty(t, probeKeys(t, s), "%s: probe keys left", s.Addr)
	}
	n, err := servers[2].Do("DBSIZE")
	require.NoError(t, err)
	assert.Equal(t, "0", n)

	// A second migration, from s2 to s3.
	from2 := mustParse(t, ringURL(servers[2:3], []string{"s2"}, nil))
	to2 := mustParse(t, ringURL(servers[3:4], []string{"s3"}, nil))
	for _, c := range []*shard.Config{&from2, &to2} {
		c.Pool.Username, c.Pool.Password = tlsUser, tlsSecret
	}
	_, err = servers[2].Do("SET", "x", "1")
	require.NoError(t, err)
	marker := shard.FenceKey(shard.TopologyID(from2), shard.TopologyID(to2))
	notArmed := func(nodes ...*redistest.Server) {
		t.Helper()
		v, err := servers[2].Do("EXISTS", marker)
		require.NoError(t, err)
		assert.Equal(t, "0", v, "not armed")
		for _, s := range nodes {
			assert.Empty(t, probeKeys(t, s), "%s: probe keys left", s.Addr)
		}
	}
	// The old node reaches s3 at another server, whose user has
	// another password.
	other := redistest.StartNTB(t, 1, redistest.Options{Users: []redistest.User{{Name: tlsUser, Password: "another-pass-14"}}})
	err = reshard.Arm(ctx, from2, to2, reshard.ArmOptions{SkipClientCheck: true, Addrs: map[string]string{servers[3].Addr: other[0].Addr}})
	require.ErrorIs(t, err, reshard.ErrMigrateProbe)
	var pe *reshard.ProbeError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, servers[2].Addr, pe.From.Addr)
	assert.Equal(t, servers[3].Addr, pe.To.Addr)
	assert.Equal(t, other[0].Addr, pe.Target)
	assert.Contains(t, err.Error(), "WRONGPASS")
	assert.Contains(t, err.Error(), "AUTH")
	assert.NotContains(t, fmt.Sprintf("%v %+v %#v", err, err, err), tlsSecret)
	notArmed(servers[2], servers[3], other[0])
	// The processes' config as To: its Migration.Addrs are used alike.
	mig := to2
	f := from2
	mig.Migration = &shard.Migration{From: &f, Addrs: map[string]string{servers[3].Addr: other[0].Addr}}
	_, err = reshard.Move(ctx, reshard.Options{From: from2, To: mig, SkipClientCheck: true})
	require.ErrorIs(t, err, reshard.ErrMigrateProbe)
	notArmed(servers[2], servers[3], other[0])

	// The new node itself refuses the password: refused too (the
	// harness logs in as that user: s3 is not looked at after).
	_, err = servers[3].Do("ACL", "SETUSER", tlsUser, "resetpass", ">another-pass-14")
	require.NoError(t, err)
	err = reshard.Arm(ctx, from2, to2, reshard.ArmOptions{SkipClientCheck: true})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "WRONGPASS")
	assert.NotContains(t, fmt.Sprintf("%v %+v %#v", err, err, err), tlsSecret)
	notArmed(servers[2])
}

// A probe key that a mover killed mid-probe leaves (it expires) is
// neither moved nor reported misplaced.
func TestReview14LeftoverProbeKeyIsSkipped(t *testing.T) {
	ctx := context.Background()
	servers, from, to := moveAll(t)
	fill(t, from, "k", 50)
	const key = "shardis:migration:probe:0123456789abcdef:7"
	_, err := servers[0].Do("SET", key, "1", "PX", "60000")
	require.NoError(t, err)
	_, err = servers[1].Do("SET", key, "1", "PX", "60000")
	require.NoError(t, err)
	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true})
	require.NoError(t, err)
	assert.Equal(t, int64(50), rep.Moved)
	require.NotNil(t, rep.Verify)
	assert.Zero(t, rep.Verify.Misplaced, "misplaced: %v", rep.Verify.Samples)
	v, err := reshard.Verify(ctx, to, reshard.VerifyOptions{Nodes: []string{servers[0].Addr}})
	require.NoError(t, err)
	assert.Zero(t, v.Misplaced, "misplaced: %v", v.Samples)
	assert.Zero(t, v.Strays)
}

// Between two clusters of three masters with the same slot ranges each
// old master sends its keys to one new master: arming probes each of
// these three ways once (with a key of a slot that both masters serve),
// no other, and leaves no probe key on any node.
func TestReview14ArmProbesEveryWayBetweenClusters(t *testing.T) {
	ctx := context.Background()
	ca := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	cb := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	from, to := mustParse(t, clusterURL(ca)), mustParse(t, clusterURL(cb))
	before := make([]int, len(ca.Nodes))
	for i, s := range ca.Nodes {
		before[i] = commandCount(t, s, "migrate")
	}
	require.NoError(t, reshard.Arm(ctx, from, to, reshard.ArmOptions{SkipClientCheck: true}))
	for i, s := range ca.Nodes {
		assert.Equal(t, 1, commandCount(t, s, "migrate")-before[i], "%s: a MIGRATE to the new master of its slots", s.Addr)
	}
	for _, s := range append(append([]*redistest.Server{}, ca.Nodes...), cb.Nodes...) {
		assert.Empty(t, probeKeys(t, s), "%s: probe keys left", s.Addr)
		if slices.Contains(cb.Nodes, s) {
			n, err := s.Do("DBSIZE")
			require.NoError(t, err)
			assert.Equal(t, "0", n, "%s: nothing left at a new node", s.Addr)
		}
	}
}

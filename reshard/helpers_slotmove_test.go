package reshard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// Set-up shared by the tests that move a slot of a cluster while the
// mover runs: the keys they write, the masters the slot moves between,
// and where each key stands afterwards.

// slotKeys returns tagged keys prefix:{tag}:i, all in one slot, followed
// by spread keys prefix:i, spread over the slots.
func slotKeys(prefix string, tagged, spread int) []string {
	var keys []string
	for i := range tagged {
		keys = append(keys, fmt.Sprintf("%s:{tag}:%d", prefix, i)) // one slot
	}
	for i := range spread {
		keys = append(keys, fmt.Sprintf("%s:%d", prefix, i)) // spread
	}
	return keys
}

// setEach writes the value "v-"+k to every key k through c.
func setEach(ctx context.Context, t *testing.T, c *shard.Client, keys []string) {
	t.Helper()
	for _, k := range keys {
		_, err := c.Do(ctx, "SET", k, "v-"+k)
		require.NoError(t, err)
	}
}

// ownerAndOther returns the master of c that serves slot, and another
// master of c.
func ownerAndOther(t *testing.T, c *redistest.Cluster, slot int) (owner, other *redistest.Server) {
	t.Helper()
	owner, err := c.MasterOfSlot(slot)
	require.NoError(t, err)
	other, err = c.OtherMaster(owner)
	require.NoError(t, err)
	return owner, other
}

// placesOf returns the addresses of the servers on which key exists (a
// server that does not answer counts as not holding it).
func placesOf(servers []*redistest.Server, key string) []string {
	var places []string
	for _, s := range servers {
		if n, err := s.Do("EXISTS", key); err == nil && n == "1" {
			places = append(places, s.Addr)
		}
	}
	return places
}

// checkInRing asserts that k, read through dst (a client of the ring the
// rig moves to), holds the value and the expiry the rig gave it.
func (r *fallbackRig) checkInRing(ctx context.Context, t *testing.T, dst *shard.Client, k string) {
	t.Helper()
	v, err := dst.Do(ctx, "GET", k)
	require.NoError(t, err)
	assert.Equal(t, []byte(r.want[k]), v, k)
	p, err := dst.Do(ctx, "PTTL", k)
	require.NoError(t, err)
	ttl, _ := p.(int64)
	if r.expiring[k] {
		assert.True(t, ttl > 0 && ttl <= fallbackTTL, "%s keeps its expiry: PTTL %d", k, ttl)
	} else {
		assert.EqualValues(t, -1, ttl, "%s has no expiry", k)
	}
}

// startRingToCluster starts a ring of two servers (s0, s1) and a cluster
// of its own of three masters, and returns them with the configurations
// of the ring (from) and of the cluster (to). It skips the test in
// -short mode.
func startRingToCluster(t *testing.T) (servers []*redistest.Server, rc *redistest.Cluster, from, to shard.Config) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a cluster of its own")
	}
	servers = redistest.StartNTB(t, 2, redistest.Options{})
	rc = redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	from = mustParse(t, ringURL(servers, []string{"s0", "s1"}, nil))
	to = mustParse(t, clusterURL(rc))
	return servers, rc, from, to
}

// keysOn returns every key on the server s, read with SCAN, which also
// sees the keys of a half-moved slot on both of its masters.
func keysOn(t *testing.T, s *redistest.Server) []string {
	t.Helper()
	conn := newRawConn(t, s)
	var keys []string
	cursor := "0"
	for {
		vals, err := conn.Do("SCAN", cursor, "COUNT", 1000)
		require.NoError(t, err)
		page := vals.([]any)
		cursor = string(page[0].([]byte))
		for _, k := range page[1].([]any) {
			keys = append(keys, string(k.([]byte)))
		}
		if cursor == "0" {
			return keys
		}
	}
}

// firstTagKeys returns the first keys of keys in the rig's slot (those
// with the {tag} hash tag), at most n of them.
func firstTagKeys(keys []string, n int) []string {
	var tagged []string
	for _, k := range keys {
		if hasTagKey([]string{k}) && len(tagged) < n {
			tagged = append(tagged, k)
		}
	}
	return tagged
}

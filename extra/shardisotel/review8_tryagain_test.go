package shardisotel_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
)

// TestReview8TryAgainIsAnEventOfOneSpan: a multi-key command whose keys
// are split by a live slot move gets TRYAGAIN until the client gives up:
// one span, one redirect event per TRYAGAIN naming the node that sent it
// (and no made-up slot: the reply names none), the attempts counted, and
// status Error since the final attempt failed.
func TestReview8TryAgainIsAnEventOfOneSpan(t *testing.T) {
	rc := clusterForTest(t)
	ctx := context.Background()
	masters := rc.Masters()
	from, to := masters[0], masters[1]
	k1, slot := emptySlotKey(t, rc, from, "r8ta")
	k2 := k1 + "-other" // same hash tag, same slot
	s := strconv.Itoa(slot)
	fromID, toID := nodeID(t, from), nodeID(t, to)
	for _, k := range []string{k1, k2} {
		_, err := from.Do("SET", k, "v")
		require.NoError(t, err)
	}
	do := func(srv *redistest.Server, args ...string) {
		t.Helper()
		_, err := srv.Do(args...)
		require.NoError(t, err, "%v", args)
	}
	do(to, "CLUSTER", "SETSLOT", s, "IMPORTING", fromID)
	do(from, "CLUSTER", "SETSLOT", s, "MIGRATING", toID)
	t.Cleanup(func() {
		from.Do("DEL", k1, k2) //nolint:errcheck // best effort
		to.Do("DEL", k1, k2)   //nolint:errcheck // best effort
		for _, srv := range []*redistest.Server{from, to} {
			srv.Do("CLUSTER", "SETSLOT", s, "NODE", fromID) //nolint:errcheck // best effort
		}
	})
	host, port := hostPort(t, to.Addr)
	do(from, "MIGRATE", host, port, "", "0", "5000", "AUTH2", user, password, "KEYS", k1)

	tel := instrumented(t, givingUpConfig(rc, pool.Options{Username: user, Password: password, DialTimeout: time.Second, ReadTimeout: 2 * time.Second}))
	spans := tel.spans

	_, err := tel.c.Do(ctx, "MGET", k1, k2)
	require.Error(t, err, "the keys are on two nodes while the slot moves")
	ended := spans.Ended()
	require.Len(t, ended, 1)
	sp := ended[0]
	a := attrs(sp.Attributes())
	assert.Equal(t, codes.Error, sp.Status().Code)
	tryAgain := 0
	for _, ev := range spanEvents(sp) {
		if ev["name"] == "redirect" && ev["shardis.redirect.kind"] == "TRYAGAIN" {
			tryAgain++
			assert.Equal(t, from.Addr, ev["shardis.redirect.from"], "%v", ev)
			assert.NotEqual(t, "-1", ev["shardis.redirect.slot"], "%v", ev)
		}
	}
	require.Positive(t, tryAgain, "TRYAGAIN shows: %v", spanEvents(sp))
	n, err := strconv.Atoi(a["shardis.attempts"])
	require.NoError(t, err, "shardis.attempts: %q", a["shardis.attempts"])
	assert.Greater(t, n, 1)
}

package shardisotel_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// TestReview9RetriedAttemptSaysItsCause: a command whose slot's master
// answers CLUSTERDOWN (the slot is not served) is retried until the
// client gives up. Every failed attempt's event, the measurement of each
// attempt, and the span itself say why in error.type: CLUSTERDOWN, the
// server's code, not the outcome class "retry" that shardis.outcome
// already says.
func TestReview9RetriedAttemptSaysItsCause(t *testing.T) {
	rc := clusterForTest(t)
	ctx := context.Background()
	m := rc.Masters()[0]
	key, slot := emptySlotKey(t, rc, m, "r9rc")
	s := strconv.Itoa(slot)

	tel := instrumented(t, givingUpConfig(rc, pool.Options{Username: user, Password: password, DialTimeout: time.Second, ReadTimeout: 2 * time.Second}))
	c, spans, reader := tel.c, tel.spans, tel.reader
	_, err := c.Do(ctx, "GET", key) // the client knows the slot's master
	require.NoError(t, err)

	// The master stops serving the slot (the others still say it does):
	// it answers CLUSTERDOWN for the key until the slot is given back.
	_, err = m.Do("CLUSTER", "DELSLOTS", s)
	require.NoError(t, err)
	t.Cleanup(func() { m.Do("CLUSTER", "ADDSLOTS", s) }) //nolint:errcheck // best effort

	spans.Reset()
	_, err = c.Do(ctx, "GET", key)
	require.ErrorIs(t, err, shard.ErrRetryBudget)
	_, err = m.Do("CLUSTER", "ADDSLOTS", s)
	require.NoError(t, err)

	ended := spans.Ended()
	require.Len(t, ended, 1)
	sp := ended[0]
	a := attrs(sp.Attributes())
	assert.Equal(t, codes.Error, sp.Status().Code)
	assert.Equal(t, "retry", a["shardis.outcome"])
	assert.Equal(t, "CLUSTERDOWN", a["error.type"], "the span says why the client gave up")
	failed := 0
	for _, ev := range spanEvents(sp) {
		if ev["name"] != "attempt failed" {
			continue
		}
		failed++
		assert.Equal(t, "retry", ev["shardis.outcome"], "%v", ev)
		assert.Equal(t, "CLUSTERDOWN", ev["error.type"], "%v", ev)
	}
	assert.Greater(t, failed, 1, "the attempts show: %v", spanEvents(sp))

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(ctx, &rm))
	types := map[string]uint64{}
	for _, p := range histPoints(t, rm, "db.client.operation.duration") {
		a := attrs(p.Attributes.ToSlice())
		if a["db.operation.name"] == "GET" && a["shardis.outcome"] == "retry" {
			types[a["error.type"]] += p.Count
		}
	}
	require.Len(t, types, 1, "%v", types)
	assert.Positive(t, types["CLUSTERDOWN"], "the retried attempts are measured with their cause: %v", types)
}

// TestReview9RetriedAttemptOnADeadNodeSaysItsCause: a command whose
// master was killed is retried until the client gives up; the failed
// attempts and the span say the connection could not be opened (or the
// node was marked down for it), not "retry".
func TestReview9RetriedAttemptOnADeadNodeSaysItsCause(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster and kills a master")
	}
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	tel := instrumented(t, givingUpConfig(rc, pool.Options{DialTimeout: time.Second, ReadTimeout: time.Second}))
	c, spans := tel.c, tel.spans
	ctx := context.Background()
	key := keyOfSlot0(t)
	_, err := c.Do(ctx, "GET", key)
	require.NoError(t, err)
	victim, err := rc.MasterOfSlot(0)
	require.NoError(t, err)
	require.NoError(t, victim.Kill())

	spans.Reset()
	_, err = c.Do(ctx, "GET", key)
	require.ErrorIs(t, err, shard.ErrRetryBudget)
	ended := spans.Ended()
	require.Len(t, ended, 1)
	sp := ended[0]
	causes := []string{"dial", "node_down"}
	assert.Contains(t, causes, attrs(sp.Attributes())["error.type"])
	failed := 0
	for _, ev := range spanEvents(sp) {
		if ev["name"] == "attempt failed" && ev["server.address"]+":"+ev["server.port"] == victim.Addr {
			failed++
			assert.Equal(t, "retry", ev["shardis.outcome"], "%v", ev)
			assert.Contains(t, causes, ev["error.type"], "%v", ev)
		}
	}
	assert.Greater(t, failed, 1, "the attempts show: %v", spanEvents(sp))
}

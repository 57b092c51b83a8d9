package shardisotel_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// TestReview17ErrorCauseOnTheSpan: against password-protected servers,
// the span of a command that failed says why in error.type and its
// status: refused credentials (the server's WRONGPASS), a read that timed
// out ("timeout"), a node the health checks marked down ("node_down"),
// as do the duration measurements of the latter and of the refused
// connections before it ("dial"), not just "failed"; and
// no exported span, event or metric holds the password, the right one or
// the wrong one.
func TestReview17ErrorCauseOnTheSpan(t *testing.T) {
	const (
		name   = "r17user"
		secret = "r17-S3cret-pw"
		wrong  = "r17-Wr0ng-pw"
	)
	servers := redistest.StartNTB(t, 1, redistest.Options{Users: []redistest.User{{Name: name, Password: secret}}})
	ringCfg := func(pw string, health shard.HealthOptions) shard.Config {
		return shard.Config{
			Pool:   pool.Options{Username: name, Password: pw, DialTimeout: time.Second, ReadTimeout: 200 * time.Millisecond},
			Health: health,
			Shards: []ring.Shard{{Name: "only", Addr: servers[0].Addr, Weight: 1}},
		}
	}
	ctx := context.Background()
	lastSpan := func(tel *telemetry, op string) map[string]string {
		t.Helper()
		ended := tel.spans.Ended()
		require.NotEmpty(t, ended)
		s := ended[len(ended)-1]
		require.Equal(t, op, s.Name())
		a := attrs(s.Attributes())
		a["status"] = s.Status().Code.String() + " " + s.Status().Description
		return a
	}
	var exported []string
	dump := func(tel *telemetry) {
		var rm metricdata.ResourceMetrics
		require.NoError(t, tel.reader.Collect(ctx, &rm))
		js, err := json.Marshal(rm)
		require.NoError(t, err)
		exported = append(exported, string(js))
		for _, s := range tel.spans.Ended() {
			exported = append(exported, fmt.Sprintf("%s %v %v %v", s.Name(), s.Attributes(), s.Events(), s.Status()))
		}
	}

	// Refused credentials.
	bad := instrumented(t, ringCfg(wrong, shard.HealthOptions{Interval: -1}))
	_, err := bad.c.Do(ctx, "GET", "r17:k")
	require.ErrorIs(t, err, pool.ErrAuth)
	a := lastSpan(bad, "GET")
	assert.Equal(t, "WRONGPASS", a["error.type"], "the server's code: %v", a)
	assert.Equal(t, "Error WRONGPASS", a["status"])
	dump(bad)

	// A read whose reply did not come within the read timeout (the
	// server frozen), from a client without health checks.
	slow := instrumented(t, ringCfg(secret, shard.HealthOptions{Interval: -1}))
	_, err = slow.c.Do(ctx, "SET", "r17:k", "v")
	require.NoError(t, err)
	require.NoError(t, servers[0].Pause())
	_, err = slow.c.Do(ctx, "GET", "r17:k")
	require.NoError(t, servers[0].Resume())
	require.Error(t, err)
	a = lastSpan(slow, "GET")
	assert.Equal(t, "timeout", a["error.type"], "%v", a)
	assert.Equal(t, "Error timeout", a["status"])
	dump(slow)

	// A node the health checks marked down, and the refused dials
	// before that.
	tel := instrumented(t, ringCfg(secret, shard.HealthOptions{Interval: 50 * time.Millisecond, FailureLimit: 2, Timeout: 200 * time.Millisecond}))
	_, err = tel.c.Do(ctx, "SET", "r17:k", "v")
	require.NoError(t, err)
	require.NoError(t, servers[0].Kill())
	waitFor(t, 20*time.Second, "the node marked down", func() bool {
		_, err := tel.c.Do(ctx, "GET", "r17:k")
		return errors.Is(err, shard.ErrNodeDown)
	})
	a = lastSpan(tel, "GET")
	assert.Equal(t, "node_down", a["error.type"], "%v", a)
	assert.Equal(t, "Error node_down", a["status"])
	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.reader.Collect(ctx, &rm))
	causes := map[string]uint64{}
	for _, p := range histPoints(t, rm, "db.client.operation.duration") {
		a := attrs(p.Attributes.ToSlice())
		if a["shardis.outcome"] == "failed" {
			causes[a["error.type"]] += p.Count
		}
	}
	assert.Positive(t, causes["node_down"], "%v", causes)
	assert.Zero(t, causes["failed"], "%v", causes)
	for c := range causes {
		assert.Contains(t, []string{"node_down", "dial"}, c, "%v", causes)
	}
	dump(tel)

	all := strings.Join(exported, "\n")
	for _, s := range []string{secret, wrong, "S3cret", "Wr0ng"} {
		assert.NotContains(t, all, s)
	}
}

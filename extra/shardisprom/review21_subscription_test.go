package shardisprom_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/shardis/shardis/extra/shardisprom"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gaugesAndCounters gathers reg and returns the value of each series
// without labels but constLabels, by metric name.
func gaugesAndCounters(reg *prometheus.Registry) (map[string]float64, error) {
	mfs, err := reg.Gather()
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			name := mf.GetName()
			for _, l := range m.GetLabel() {
				if l.GetName() != "sub" {
					name += "{" + l.GetName() + "=" + l.GetValue() + "}"
				}
			}
			if m.GetCounter() != nil {
				out[name] = m.GetCounter().GetValue()
			} else {
				out[name] = m.GetGauge().GetValue()
			}
		}
	}
	return out, nil
}

// TestReview21SubscriptionIsExported: a subscription's messages dropped
// for a full buffer, and its connections lost and subscribed again, were
// counted (shard.SubscriptionStats) but reached no exporter: a program
// losing messages had nothing to alert on. SubscriptionCollector exports
// them.
func TestReview21SubscriptionIsExported(t *testing.T) {
	c, servers := ringClient(t, 1, nil)
	ctx := context.Background()
	sub, err := c.NewSubscription(shard.SubscriptionOptions{BufferSize: 2})
	require.NoError(t, err)
	t.Cleanup(func() { sub.Close() })
	require.NoError(t, sub.Subscribe(ctx, "r21ch"))
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	m, err := sub.Receive(rctx)
	require.NoError(t, err)
	require.IsType(t, redis.Subscription{}, m)

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(shardisprom.NewSubscriptionCollector(sub, prometheus.Labels{"sub": "orders"}))
	for range 5 {
		_, err := c.Do(ctx, "PUBLISH", "r21ch", "m")
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		v, err := gaugesAndCounters(reg)
		return err == nil && v["shardis_subscription_received_total"] == 5
	}, 20*time.Second, 10*time.Millisecond, "the 5 messages were not counted received")
	v, err := gaugesAndCounters(reg)
	require.NoError(t, err)
	assert.Equal(t, 3.0, v["shardis_subscription_dropped_total"], "%v", v)
	assert.Equal(t, 2.0, v["shardis_subscription_buffered"], "%v", v)
	assert.Equal(t, 1.0, v["shardis_subscription_names{kind=channel}"], "%v", v)
	assert.Equal(t, 0.0, v["shardis_subscription_names{kind=pattern}"], "%v", v)
	assert.Equal(t, 1.0, v["shardis_subscription_connections"], "%v", v)
	assert.Equal(t, 0.0, v["shardis_subscription_lost_connections_total"], "%v", v)

	// The server closes the subscription's connection: it is lost, and
	// the channel subscribed again on a new one.
	_, err = servers[0].Do("CLIENT", "KILL", "TYPE", "pubsub")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		v, err := gaugesAndCounters(reg)
		return err == nil && v["shardis_subscription_lost_connections_total"] == 1 && v["shardis_subscription_resubscribed_total"] >= 1
	}, 20*time.Second, 10*time.Millisecond, "the lost connection was not counted")
	v, err = gaugesAndCounters(reg)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, v["shardis_subscription_dials_total"], 2.0, "%v", v)

	problems, err := testutil.GatherAndLint(reg)
	require.NoError(t, err)
	assert.Empty(t, problems)
}

package shardisotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/extra/shardisotel"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// subscriptionValues collects reader and returns the value of each
// shardis.client.subscription.* point of the subscription named sub (the
// attribute "sub"), by metric name and, for names, kind.
func subscriptionValues(reader *sdkmetric.ManualReader, sub string) (map[string]int64, error) {
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		return nil, err
	}
	out := map[string]int64{}
	add := func(name string, set attribute.Set, v int64) {
		if s, _ := set.Value("sub"); s.AsString() != sub {
			return
		}
		if k, ok := set.Value(shardisotel.SubscriptionKindKey); ok {
			name += "{" + k.AsString() + "}"
		}
		out[name] = v
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					add(m.Name, p.Attributes, p.Value)
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					add(m.Name, p.Attributes, p.Value)
				}
			}
		}
	}
	return out, nil
}

// TestReview21SubscriptionIsObserved: a subscription's messages dropped
// for a full buffer and its connections lost and subscribed again were
// counted (shard.SubscriptionStats) but reached no exporter: a program
// losing messages had nothing to alert on. ObserveSubscription exports
// them, told apart from another subscription's by their attributes.
func TestReview21SubscriptionIsObserved(t *testing.T) {
	servers := redistest.StartNTB(t, 1, redistest.Options{Users: []redistest.User{{Name: user, Password: password}}})
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { mp.Shutdown(context.Background()) })
	cfg := shard.Config{
		Shards: []ring.Shard{{Name: "a", Addr: servers[0].Addr, Weight: 1}},
		Pool:   pool.Options{Username: user, Password: password, DialTimeout: time.Second, ReadTimeout: time.Second},
		Health: shard.HealthOptions{Interval: -1},
	}
	in, err := shardisotel.Instrument(&cfg, shardisotel.WithMeterProvider(mp))
	require.NoError(t, err)
	ctx := context.Background()
	c, err := shard.New(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })

	sub, err := c.NewSubscription(shard.SubscriptionOptions{BufferSize: 2})
	require.NoError(t, err)
	t.Cleanup(func() { sub.Close() })
	other, err := c.PSubscribe(ctx, "r21otel*")
	require.NoError(t, err)
	t.Cleanup(func() { other.Close() })
	for _, s := range []struct {
		sub  *shard.Subscription
		name string
	}{{sub, "orders"}, {other, "audit"}} {
		reg, err := in.ObserveSubscription(s.sub, attribute.String("sub", s.name))
		require.NoError(t, err)
		t.Cleanup(func() { reg.Unregister() })
	}
	require.NoError(t, sub.Subscribe(ctx, "r21ch"))
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	m, err := sub.Receive(rctx)
	require.NoError(t, err)
	require.IsType(t, redis.Subscription{}, m)

	for range 5 {
		_, err := c.Do(ctx, "PUBLISH", "r21ch", "m")
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		v, err := subscriptionValues(reader, "orders")
		return err == nil && v["shardis.client.subscription.received"] == 5
	}, 20*time.Second, 10*time.Millisecond, "the 5 messages were not counted received")
	v, err := subscriptionValues(reader, "orders")
	require.NoError(t, err)
	assert.Equal(t, int64(3), v["shardis.client.subscription.dropped"], "%v", v)
	assert.Equal(t, int64(2), v["shardis.client.subscription.buffered"], "%v", v)
	assert.Equal(t, int64(1), v["shardis.client.subscription.names{channel}"], "%v", v)
	assert.Equal(t, int64(0), v["shardis.client.subscription.names{pattern}"], "%v", v)
	assert.Equal(t, int64(1), v["shardis.client.subscription.connections"], "%v", v)
	assert.Equal(t, int64(0), v["shardis.client.subscription.lost"], "%v", v)
	o, err := subscriptionValues(reader, "audit")
	require.NoError(t, err)
	assert.Equal(t, int64(1), o["shardis.client.subscription.names{pattern}"], "the other subscription's own: %v", o)
	assert.Equal(t, int64(0), o["shardis.client.subscription.received"], "the other subscription's own: %v", o)

	_, err = servers[0].Do("CLIENT", "KILL", "TYPE", "pubsub")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		v, err := subscriptionValues(reader, "orders")
		return err == nil && v["shardis.client.subscription.lost"] == 1 && v["shardis.client.subscription.resubscribed"] >= 1
	}, 20*time.Second, 10*time.Millisecond, "the lost connection was not counted")
}

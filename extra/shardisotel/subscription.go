package shardisotel

import (
	"context"
	"errors"
	"fmt"

	"github.com/shardis/shardis/shard"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// SubscriptionKindKey is the kind of the names a subscription holds:
// "channel", "pattern" or "shard_channel".
const SubscriptionKindKey = attribute.Key("shardis.subscription.kind")

// ObserveSubscription registers gauges and counters read from s.Stats()
// at each collection (shard.SubscriptionStats), with attrs (a name for
// the subscription, say: keep them few) and the Instrumentation's
// WithAttributes on every point: shardis.client.subscription.names (by
// SubscriptionKindKey), .connections, .buffered, and the counters
// .received, .delivered, .dropped (messages dropped because the buffer
// was full: alert on any), .dials, .dial_errors, .lost (connections
// lost), .resubscribed, .moved (shard channels that left a node) and
// .server_errors. Channel names are never attributes. Unregister the
// returned registration when s is closed.
func (in *Instrumentation) ObserveSubscription(s *shard.Subscription, attrs ...attribute.KeyValue) (metric.Registration, error) {
	m := in.meter
	var err error
	upDown := func(name, desc, unit string) metric.Int64ObservableUpDownCounter {
		i, e := m.Int64ObservableUpDownCounter("shardis.client.subscription."+name, metric.WithDescription(desc), metric.WithUnit(unit))
		err = errors.Join(err, e)
		return i
	}
	counter := func(name, desc, unit string) metric.Int64ObservableCounter {
		i, e := m.Int64ObservableCounter("shardis.client.subscription."+name, metric.WithDescription(desc), metric.WithUnit(unit))
		err = errors.Join(err, e)
		return i
	}
	names := upDown("names", "Names subscribed, by kind (channel, pattern, shard_channel).", "{name}")
	conns := upDown("connections", "Connections open now, one per node in use.", "{connection}")
	buffered := upDown("buffered", "Messages waiting for the application.", "{message}")
	received := counter("received", "Messages read from the servers.", "{message}")
	delivered := counter("delivered", "Messages handed to the application.", "{message}")
	dropped := counter("dropped", "Messages dropped because the buffer was full.", "{message}")
	dials := counter("dials", "Connections dialed, the first ones included.", "{dial}")
	dialErrors := counter("dial_errors", "Dials that failed.", "{dial}")
	lost := counter("lost", "Connections lost: closed by the peer, I/O errors, missed health PINGs.", "{connection}")
	resubscribed := counter("resubscribed", "Names subscribed again after a lost connection, or moved to another node.", "{name}")
	moved := counter("moved", "Shard channels that left a node (MOVED, or a slot migration).", "{name}")
	serverErrors := counter("server_errors", "Error replies in subscribe mode.", "{error}")
	if err != nil {
		return nil, fmt.Errorf("shardis: otel instruments: %w", err)
	}
	common := in.withCommon(append([]attribute.KeyValue(nil), attrs...))
	all := metric.WithAttributeSet(attribute.NewSet(common...))
	kind := func(k string) metric.ObserveOption {
		return metric.WithAttributeSet(attribute.NewSet(append(common[:len(common):len(common)], SubscriptionKindKey.String(k))...))
	}
	channels, patterns, shardChannels := kind("channel"), kind("pattern"), kind("shard_channel")
	return m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		st := s.Stats()
		o.ObserveInt64(names, int64(st.Channels), channels)
		o.ObserveInt64(names, int64(st.Patterns), patterns)
		o.ObserveInt64(names, int64(st.ShardChannels), shardChannels)
		o.ObserveInt64(conns, int64(st.Connections), all)
		o.ObserveInt64(buffered, int64(st.Buffered), all)
		o.ObserveInt64(received, st.Received, all)
		o.ObserveInt64(delivered, st.Delivered, all)
		o.ObserveInt64(dropped, st.Dropped, all)
		o.ObserveInt64(dials, st.Dials, all)
		o.ObserveInt64(dialErrors, st.DialErrors, all)
		o.ObserveInt64(lost, st.Lost, all)
		o.ObserveInt64(resubscribed, st.Resubscribed, all)
		o.ObserveInt64(moved, st.Moved, all)
		o.ObserveInt64(serverErrors, st.ServerErrors, all)
		return nil
	}, names, conns, buffered, received, delivered, dropped, dials, dialErrors, lost, resubscribed, moved, serverErrors)
}

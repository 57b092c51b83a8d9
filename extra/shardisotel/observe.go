package shardisotel

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shardis/shardis/shard"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// Observe registers gauges and counters read from c.Stats() at each
// collection: connections per pool (idle, used), pool waits, and per node
// its state, commands, connection errors and health-check round trip;
// per Sentinel shard (shardis.node, its name) the failovers it followed,
// whether its view of the master is stale and how many Sentinels it is
// subscribed to; during a migration its phase and steps
// (MigrationFromKey, MigrationToKey, MigrationStepKey). Unregister the returned registration when c is closed.
func (in *Instrumentation) Observe(c *shard.Client) (metric.Registration, error) {
	m := in.meter
	var err, e error
	conns, e := m.Int64ObservableUpDownCounter("db.client.connection.count",
		metric.WithDescription("Open connections per pool, by state (idle, used)."), metric.WithUnit("{connection}"))
	err = errors.Join(err, e)
	waits, e := m.Int64ObservableCounter("shardis.client.connection.waits",
		metric.WithDescription("Times a caller waited for a connection because the pool was at MaxActive."), metric.WithUnit("{wait}"))
	err = errors.Join(err, e)
	waitTime, e := m.Float64ObservableCounter("shardis.client.connection.wait_time",
		metric.WithDescription("Total time callers waited for a connection."), metric.WithUnit("s"))
	err = errors.Join(err, e)
	up, e := m.Int64ObservableGauge("shardis.client.node.up",
		metric.WithDescription("1 while the node is usable, 0 while health checks have it marked down."), metric.WithUnit("1"))
	err = errors.Join(err, e)
	commands, e := m.Int64ObservableCounter("shardis.client.commands",
		metric.WithDescription("Commands sent (or failed fast) to the node."), metric.WithUnit("{command}"))
	err = errors.Join(err, e)
	failures, e := m.Int64ObservableCounter("shardis.client.node.errors",
		metric.WithDescription("Connection-level failures of the node: dial, I/O, timeout, marked down."), metric.WithUnit("{error}"))
	err = errors.Join(err, e)
	rtt, e := m.Float64ObservableGauge("shardis.client.node.rtt",
		metric.WithDescription("Smoothed health-check round trip of the node."), metric.WithUnit("s"))
	err = errors.Join(err, e)
	migPhase, e := m.Int64ObservableGauge("shardis.client.migration.phase",
		metric.WithDescription("While the client migrates: 0 routing by the old topology, 1 fenced, 2 armed (moving keys on touch)."), metric.WithUnit("1"))
	err = errors.Join(err, e)
	migSteps, e := m.Int64ObservableCounter("shardis.client.migration.steps",
		metric.WithDescription("While the client migrates, what it did, by step (shardis.migration.step)."), metric.WithUnit("{step}"))
	err = errors.Join(err, e)
	sentFailovers, e := m.Int64ObservableCounter("shardis.client.sentinel.failovers",
		metric.WithDescription("Master changes the client followed on a Sentinel shard (shardis.node)."), metric.WithUnit("{failover}"))
	err = errors.Join(err, e)
	sentStale, e := m.Int64ObservableGauge("shardis.client.sentinel.stale",
		metric.WithDescription("1 while the last query of a Sentinel shard's Sentinels failed: the client serves the last master it knew."), metric.WithUnit("1"))
	err = errors.Join(err, e)
	sentSubscribed, e := m.Int64ObservableGauge("shardis.client.sentinel.subscribed",
		metric.WithDescription("Sentinels a Sentinel shard is subscribed to for +switch-master now."), metric.WithUnit("{sentinel}"))
	err = errors.Join(err, e)
	if err != nil {
		return nil, fmt.Errorf("shardis: otel instruments: %w", err)
	}
	return m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		st := c.Stats()
		pools := map[string]bool{}
		for _, n := range st.Nodes {
			server, _ := c.NodeAddr(n.Node) // a Sentinel shard's master ("" while it has none)
			na, _ := in.nodeAt(n.Node, server)
			node := append(na.attrs(), ReadOnlyKey.Bool(n.ReadOnly))
			node = in.withCommon(node)
			upValue := int64(1)
			if n.Down {
				upValue = 0
			}
			o.ObserveInt64(up, upValue, metric.WithAttributes(node...))
			o.ObserveInt64(commands, n.Commands, metric.WithAttributes(node...))
			o.ObserveInt64(failures, n.Errors, metric.WithAttributes(node...))
			if n.RTT > 0 {
				o.ObserveFloat64(rtt, time.Duration(n.RTT).Seconds(), metric.WithAttributes(node...))
			}
			if pools[n.Node.Addr] {
				continue
			}
			pools[n.Node.Addr] = true
			pool := in.withCommon([]attribute.KeyValue{semconv.DBClientConnectionPoolName(n.Node.Addr)})
			idle := append(pool[:len(pool):len(pool)], semconv.DBClientConnectionStateIdle)
			used := append(pool[:len(pool):len(pool)], semconv.DBClientConnectionStateUsed)
			o.ObserveInt64(conns, int64(n.Pool.Idle), metric.WithAttributes(idle...))
			o.ObserveInt64(conns, int64(max(n.Pool.Active-n.Pool.Idle, 0)), metric.WithAttributes(used...))
			o.ObserveInt64(waits, n.Pool.WaitCount, metric.WithAttributes(pool...))
			o.ObserveFloat64(waitTime, n.Pool.WaitDuration.Seconds(), metric.WithAttributes(pool...))
		}
		for _, sh := range st.Sentinel {
			// The shard by its name: its master's address changes at
			// each failover, which would start new series.
			attrs := metric.WithAttributes(in.withCommon([]attribute.KeyValue{NodeKey.String(sh.Name)})...)
			stale := int64(0)
			if sh.Stale {
				stale = 1
			}
			o.ObserveInt64(sentFailovers, sh.Failovers, attrs)
			o.ObserveInt64(sentStale, stale, attrs)
			o.ObserveInt64(sentSubscribed, int64(sh.Subscribed), attrs)
		}
		if mi, ok := c.Migration(); ok {
			sides := in.withCommon([]attribute.KeyValue{MigrationFromKey.String(mi.FromID), MigrationToKey.String(mi.ToID)})
			o.ObserveInt64(migPhase, int64(mi.Phase), metric.WithAttributes(sides...))
			for _, s := range []struct {
				step string
				n    int64
			}{{"move", mi.Moves}, {"overwrite", mi.Overwrites}, {"old_read", mi.OldReads}, {"busy_key", mi.BusyKeys}, {"failure", mi.Failures}} {
				o.ObserveInt64(migSteps, s.n, metric.WithAttributes(append(sides[:len(sides):len(sides)], MigrationStepKey.String(s.step))...))
			}
		}
		return nil
	}, conns, waits, waitTime, up, commands, failures, rtt, migPhase, migSteps, sentFailovers, sentStale, sentSubscribed)
}

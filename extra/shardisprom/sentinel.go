package shardisprom

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/shardis/shardis/shard"
)

// sentinelNodePrefix starts a Sentinel shard's node address
// (shard.Node.Addr, "sentinel/<name>"), its node label.
const sentinelNodePrefix = "sentinel/"

// collectSentinel sends the series of each Sentinel shard: the
// failovers the client followed, whether the last query of its
// Sentinels failed, and how many it is subscribed to.
func (col *Collector) collectSentinel(ch chan<- prometheus.Metric, shards []shard.SentinelStats) {
	for _, s := range shards {
		l := []string{sentinelNodePrefix + s.Name, s.Name}
		stale := 0.0
		if s.Stale {
			stale = 1
		}
		ch <- prometheus.MustNewConstMetric(col.sentFailovers, prometheus.CounterValue, float64(s.Failovers), l...)
		ch <- prometheus.MustNewConstMetric(col.sentStale, prometheus.GaugeValue, stale, l...)
		ch <- prometheus.MustNewConstMetric(col.sentSubscribed, prometheus.GaugeValue, float64(s.Subscribed), l...)
	}
}

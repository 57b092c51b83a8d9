// Package shardisprom exports a shardis client's per-node counters, pool
// statistics and command latencies to Prometheus: Collector reads the
// client's Stats at each scrape; Durations, fed by hooks, holds the
// latency histogram by node (shardis_command_duration_seconds) and the
// count of node state changes by node (shardis_node_events_total: marked
// down, up again, a replica promoted by a failover).
package shardisprom

// Package shardisprom exports a shardis client's per-node counters, pool
// statistics and command latencies to Prometheus: Collector reads the
// client's Stats at each scrape; Durations, fed by hooks, holds the
// latency histogram by node (shardis_command_duration_seconds), the
// failed attempts by node and cause (shardis_command_errors_total: a
// server's error code, dial, io, timeout, node_down, ...) and the node
// state changes by node (shardis_node_events_total: marked down, up
// again, a replica promoted by a failover); SubscriptionCollector reads a
// pub/sub subscription's counters (messages dropped, connections lost).
// No label holds a key, a command's arguments or a credential, and every
// label's values are bounded.
package shardisprom

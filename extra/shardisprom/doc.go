// Package shardisprom exports a shardis client's per-node counters, pool
// statistics and command latencies to Prometheus.
package shardisprom

// Package e2e measures shardis end to end, against running Redis servers:
// throughput and latency of single commands from several concurrent
// callers, of large pipelines and of cross-shard MGET and MSET, in ring mode
// and in cluster mode on the same machine, through the same shard.Client
// API.
//
// Start runs the servers itself when none are given: three redis-server
// processes for ring mode and a three-master Redis Cluster when redis-server
// is installed, in-process miniredis servers otherwise (Servers.Embedded
// says which, and the report repeats it). Run drives the cases, each for a
// bounded time, and returns a Report that package report turns into tables,
// Markdown and charts.
//
// The workload writes 16-byte values under keys "shardis:bench:<n>:pf" and
// deletes them when it ends.
package e2e

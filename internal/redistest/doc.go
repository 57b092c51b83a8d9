// Package redistest starts real redis-server processes on free loopback
// ports, for tests, benchmarks and the shardis CLI.
//
// Every server runs in its own temporary directory, listens on 127.0.0.1
// only, logs to a file in that directory and is owned by this process: it is
// started with os/exec (never daemonized), in its own process group, and on
// Linux it is killed by the kernel if the process that started it dies.
//
// StartSentinels runs master sets with replicas and redis-sentinel
// processes that monitor them (Sentinels are Servers too: Kill, Restart,
// Stop and the pid registry work on them).
//
// Each starter comes in two forms: one that returns an error (Start,
// StartN, StartCluster, StartSentinels), for programs such as `shardis demo`, and one that
// takes a testing.TB (StartTB, StartNTB, StartClusterTB, StartSentinelsTB), which skips the
// test when redis-server is not installed (see Require), fails it on any
// error, prints the server logs when the test failed and stops the servers
// when the test ends.
//
// Every wait has a deadline and returns an error wrapping ErrTimeout rather
// than hanging.
//
// The library packages of shardis never import redistest.
package redistest

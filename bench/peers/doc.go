// Package peers measures shardis against other Go Redis clients on the same
// servers and the same workload. It lives in a module of its own so that the
// peer clients never become dependencies of the shardis module; run it from
// this directory:
//
//	go test -run='^$' -bench=. -benchmem -count=3 .
//
// BenchmarkRingPeers compares ring mode with the go-redis v9 Ring and plain
// redigo on three standalone servers. BenchmarkClusterPipeline,
// BenchmarkClusterMGET and BenchmarkClusterSingle compare cluster mode with
// the go-redis v9 ClusterClient and rueidis on a three-master cluster, and
// run the same shardis workload in ring mode on three standalone servers in
// the same run:
//
//	go test -run='^$' -bench=Cluster -benchtime=2s -benchmem -count=1 .
package peers

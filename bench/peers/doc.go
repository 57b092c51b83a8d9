// Package peers measures shardis against other Go Redis clients on the same
// servers and the same workload. It lives in a module of its own so that the
// peer clients never become dependencies of the shardis module; run it from
// this directory:
//
//	go test -run='^$' -bench=. -benchmem -count=3 .
package peers

package shard

import (
	"testing"

	"github.com/gomodule/redigo/redis"
)

// A module's command may reply with the refusal an inner call got
// (RedisModule_Call in script mode gets READONLY, NOREPLICAS, MISCONF,
// OOM) after some of its writes ran: only the cluster's redirections,
// which Redis gives before it runs any command, and a protocol error
// count as "did not run" for it. READONLY and the like from a module's
// command counted as a refusal before running, and fn's write through
// Tx.Do was forgotten: the transaction could run fn again, and write
// twice.
func TestReview16RefusedUnrunModuleAndScript(t *testing.T) {
	for _, tc := range []struct {
		name, reply string
		want        bool
	}{
		{"SET", "READONLY You can't write against a read only replica.", true},
		{"SET", "NOREPLICAS Not enough good replicas to write.", true},
		{"SET", "LOADING Redis is loading the dataset in memory", true},
		{"SET", "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.", true},
		{"SET", "OOM command not allowed when used memory > 'maxmemory'.", true},
		{"SET", "MOVED 1 127.0.0.1:7000", true},
		{"SET", "ERR Protocol error: invalid bulk length", true},
		{"SET", "ERR wrong number of arguments", false},
		{"mymodule.write", "READONLY You can't write against a read only replica.", false},
		{"mymodule.write", "NOREPLICAS Not enough good replicas to write.", false},
		{"mymodule.write", "LOADING Redis is loading the dataset in memory", false},
		{"mymodule.write", "MASTERDOWN Link with MASTER is down", false},
		{"mymodule.write", "OOM command not allowed", false},
		{"mymodule.write", "MOVED 1 127.0.0.1:7000", true},
		{"mymodule.write", "ASK 1 127.0.0.1:7000", true},
		{"mymodule.write", "TRYAGAIN Multiple keys request during rehashing of slot", true},
		{"mymodule.write", "CLUSTERDOWN The cluster is down", true},
		{"EVAL", "MOVED 1 127.0.0.1:7000", true},
		{"evalsha", "ASK 1 127.0.0.1:7000", true},
		{"FCALL", "TRYAGAIN Multiple keys request during rehashing of slot", true},
		{"EVAL", "CLUSTERDOWN The cluster is down", true},
		{"EVAL", "READONLY You can't write against a read only replica. script: ...", false},
		{"FCALL", "OOM command not allowed when used memory > 'maxmemory'.", false},
	} {
		if got := refusedUnrun(tc.name, redis.Error(tc.reply)); got != tc.want {
			t.Errorf("refusedUnrun(%s, %q) = %v, want %v", tc.name, tc.reply, got, tc.want)
		}
	}
}

package shard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview14ScriptDebugLeavesNoStateBehind: SCRIPT DEBUG YES makes the
// next EVAL on its connection start a Lua debugging session instead of
// running the script: the server answers with the debugger's lines and
// waits for debugger commands. The command was classed as changing
// nothing, so a connection that sent it through DoKey, a pipeline, a
// ForEachShard function or a transaction went back to the pool, and the
// next caller's EVAL on that node got the debugger instead of its
// script's result. Whatever path sent it, the next EVALs on that node
// must return the script's result, in ring and cluster mode, with and
// without automatic pipelining.
func TestReview14ScriptDebugLeavesNoStateBehind(t *testing.T) {
	modes := ringAndCluster(t)
	for _, mode := range modes {
		for _, auto := range []bool{false, true} {
			for _, path := range sendPaths("SCRIPT", "DEBUG", "YES") {
				name := fmt.Sprintf("%s/auto=%v/%s", mode.name, auto, path.name)
				t.Run(name, func(t *testing.T) {
					c := handOnClient(t, mode.cfg, auto)
					ctx := context.Background()
					key := "{r14sd}k"
					require.NoError(t, path.run(ctx, c, key), "SCRIPT DEBUG YES")
					for i := range 3 {
						v, err := redis.Int(c.DoKey(ctx, key, "EVAL", "return 7", 1, key))
						require.NoError(t, err, "EVAL %d after SCRIPT DEBUG YES", i)
						assert.Equal(t, 7, v, "EVAL %d after SCRIPT DEBUG YES", i)
					}
				})
			}
		}
	}
}

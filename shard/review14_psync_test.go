package shard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview14PsyncIsNotHandedOn: PSYNC ? -1 answers "+FULLRESYNC ..." at
// once and makes its connection a replica's link: the server then streams
// its data set and its writes on it, and answers nothing else. The command
// was classed as changing nothing, so DoKey, a pipeline and a ForEachShard
// function gave the connection back to the pool after that valid reply,
// and the next caller's GET on that node failed (EOF). DoKey, pipelines
// and Tx must refuse it with a *ConnStateError; a ForEachShard function
// may run it, on a connection that is then closed. Either way the next
// GETs on that node return the value, in ring and cluster mode, with and
// without automatic pipelining.
func TestReview14PsyncIsNotHandedOn(t *testing.T) {
	modes := ringAndCluster(t)
	// DoKey, pipelines and Tx refuse it; a ForEachShard function runs it.
	refused := map[string]bool{"DoKey": true, "pipeline": true, "Tx": true}
	for _, mode := range modes {
		for _, auto := range []bool{false, true} {
			for _, path := range sendPaths("PSYNC", "?", "-1") {
				t.Run(fmt.Sprintf("%s/auto=%v/%s", mode.name, auto, path.name), func(t *testing.T) {
					c := handOnClient(t, mode.cfg, auto)
					ctx := context.Background()
					key := "{r14ps}k"
					_, err := c.Do(ctx, "SET", key, "v")
					require.NoError(t, err)
					err = path.run(ctx, c, key)
					if refused[path.name] {
						requireConnStateRefusal(t, err, "PSYNC", "PSYNC")
					} else {
						require.NoError(t, err, "PSYNC")
					}
					for i := range 3 {
						v, err := redis.String(c.Do(ctx, "GET", key))
						require.NoError(t, err, "GET %d after PSYNC", i)
						assert.Equal(t, "v", v, "GET %d after PSYNC", i)
					}
				})
			}
		}
	}
}

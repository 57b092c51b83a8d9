package shard_test

import (
	"context"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// A read that a Sentinel shard's replica cannot serve goes to the master
// at once (docs/sentinel.md), whatever the replica's failure: a replica
// that refuses the client's credentials (its ACL fell out of step with
// the master's) or its connection (maxclients) is no reason to fail a
// read that the master can serve. Before, such a refusal, which carries
// the server's error reply, was taken for the command's own error reply
// and returned.
func TestSentinelReplicaRefusingLoginSendsReadsToMaster(t *testing.T) {
	c, _ := replicaRefusingLogin(t, nil)
	ctx := context.Background()
	for i := range 20 {
		v, err := redis.String(c.Do(ctx, "GET", "k"))
		if err != nil || v != "v" {
			t.Fatalf("read %d: GET k = %q, %v; want v from the master", i, v, err)
		}
	}
}

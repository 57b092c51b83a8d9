package shard_test

import (
	"context"
	"log"

	"github.com/shardis/shardis/shard"
)

// A live ring client moves into a Redis Cluster without being rebuilt:
// StartMigration discovers the cluster, and once the mover (shardis
// reshard --from RING --to CLUSTER) has armed the fence the client is a
// cluster client, moving each key from the ring on first use. After the
// mover's clean verification, FinishMigration leaves a plain cluster
// client, which reads from replicas here (read_from).
func ExampleClient_StartMigration_cluster() {
	ctx := context.Background()
	cfg, err := shard.ParseURL("redis-ring://10.0.0.1:6379,10.0.0.2:6379,10.0.0.3:6379?names=a,b,c&client_name=auto")
	if err != nil {
		log.Fatal(err)
	}
	c, err := shard.New(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	to, err := shard.ParseURL("redis-cluster://10.0.1.1:7000,10.0.1.2:7000,10.0.1.3:7000?read_from=replica-random")
	if err != nil {
		log.Fatal(err)
	}
	if err := c.StartMigration(ctx, to); err != nil {
		// errors.Is(err, shard.ErrMigration): the cluster could not be
		// discovered, the client uses a database other than 0, ...
		log.Fatal(err)
	}
	// ... the mover arms the fence: c.Migration() reports PhaseArmed and
	// c.Router() is a *shard.ClusterRouter; the mover moves and verifies ...
	if _, err := c.Do(ctx, "INCR", "visits"); err != nil { // moved from the ring first, if it was still there
		log.Fatal(err)
	}
	if err := c.FinishMigration(); err != nil {
		log.Fatal(err)
	}
}

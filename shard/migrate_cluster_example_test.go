package shard_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/gomodule/redigo/redis"
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
	addrs := redisAddrs(3) // "host:port" of the ring's redis-servers
	cfg, err := shard.ParseURL("redis-ring://" + strings.Join(addrs, ",") + "?names=a,b,c&client_name=auto")
	if err != nil {
		log.Fatal(err)
	}
	c, err := shard.New(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Do(ctx, "SET", "page:visits", 41); err != nil {
		log.Fatal(err)
	}
	seeds := clusterSeeds() // "host:port" of some of the cluster's nodes
	to, err := shard.ParseURL("redis-cluster://" + strings.Join(seeds, ",") + "?read_from=replica-random")
	if err != nil {
		log.Fatal(err)
	}
	if err := c.StartMigration(ctx, to); err != nil {
		// errors.Is(err, shard.ErrMigration): the cluster could not be
		// discovered, the client uses a database other than 0, ...
		log.Fatal(err)
	}
	// ... the mover arms the fence (alone here, the client does it) ...
	if err := c.ArmMigration(); err != nil {
		log.Fatal(err)
	}
	_, isCluster := c.Router().(*shard.ClusterRouter)
	fmt.Println("cluster client:", isCluster)
	// ... the mover moves and verifies; a key still on the ring moves
	// first when it is used.
	visits, err := redis.Int(c.Do(ctx, "INCR", "page:visits"))
	fmt.Println("visits:", visits, err)
	if err := c.FinishMigration(); err != nil {
		log.Fatal(err)
	}
	_, migrating := c.Migration()
	fmt.Println("migrating:", migrating)
	if _, err := c.Do(ctx, "DEL", "page:visits"); err != nil { // leave the cluster as it was
		log.Fatal(err)
	}
	// Output:
	// cluster client: true
	// visits: 42 <nil>
	// migrating: false
}

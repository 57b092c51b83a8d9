package reshard_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
)

// Grow a ring from three shards to four while the application, already
// running in migration mode (Config.Migration), keeps serving the keys.
func ExampleMove() {
	ctx := context.Background()
	from, err := shard.ParseURL("redis-ring://10.0.0.1:6379,10.0.0.2:6379,10.0.0.3:6379?names=a,b,c")
	if err != nil {
		log.Fatal(err)
	}
	to, err := shard.ParseURL("redis-ring://10.0.0.1:6379,10.0.0.2:6379,10.0.0.3:6379,10.0.0.4:6379?names=a,b,c,d")
	if err != nil {
		log.Fatal(err)
	}
	rep, err := reshard.Move(ctx, reshard.Options{
		From:           from,
		To:             to,
		BytesPerSecond: 20 << 20, // keep production latency
		Progress: func(p reshard.Progress) {
			fmt.Printf("\r%d/%d keys, ETA %v", p.Scanned, p.Total, p.ETA)
		},
	})
	if err != nil {
		log.Fatal(err) // a *reshard.ClientsError names a process still on the old ring
	}
	fmt.Printf("\nmoved %d keys; %d misplaced after the move\n", rep.Moved, rep.Verify.Misplaced)
}

// Check a topology after any manual operation.
func ExampleVerify() {
	cfg, err := shard.ParseURL("redis-ring://10.0.0.1:6379,10.0.0.2:6379?names=a,b")
	if err != nil {
		log.Fatal(err)
	}
	rep, err := reshard.Verify(context.Background(), cfg, reshard.VerifyOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range rep.Samples {
		fmt.Println("misplaced:", m)
	}
}

// End a migration once every process runs the new ring: Finish deletes
// the fence's markers, or says which processes still use the migration.
func ExampleFinish() {
	ctx := context.Background()
	from, err := shard.ParseURL("redis-ring://10.0.0.1:6379,10.0.0.2:6379,10.0.0.3:6379?names=a,b,c")
	if err != nil {
		log.Fatal(err)
	}
	to, err := shard.ParseURL("redis-ring://10.0.0.1:6379,10.0.0.2:6379,10.0.0.3:6379,10.0.0.4:6379?names=a,b,c,d")
	if err != nil {
		log.Fatal(err)
	}
	rep, err := reshard.Finish(ctx, from, to)
	var ce *reshard.ClientsError
	switch {
	case errors.As(err, &ce) && errors.Is(err, reshard.ErrStillMigrating):
		for _, c := range ce.Conns {
			fmt.Printf("still migrating: %s on %s\n", c.Name, c.Node)
		}
	case errors.Is(err, reshard.ErrMisplaced):
		fmt.Println("run the mover again:", err)
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Printf("finished: %d keys verified\n", rep.Scanned)
	}
}

package reshard_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"slices"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
)

// Grow a ring from three shards to four while the application, already
// running in migration mode (Config.Migration), keeps serving the keys.
func ExampleMove() {
	ctx := context.Background()
	addrs := redisAddrs(4) // "host:port" of four redis-servers
	from, err := shard.ParseURL("redis-ring://" + strings.Join(addrs[:3], ",") + "?names=a,b,c&client_name=auto")
	if err != nil {
		log.Fatal(err)
	}
	to, err := shard.ParseURL("redis-ring://" + strings.Join(addrs, ",") + "?names=a,b,c,d&client_name=auto")
	if err != nil {
		log.Fatal(err)
	}
	// The application: it routes by the old ring until the mover arms
	// the fence, then by the new one.
	app := to
	app.Migration = &shard.Migration{From: &from}
	client, err := shard.New(ctx, app)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	for i := range 100 {
		if _, err := client.Do(ctx, "SET", fmt.Sprintf("user:%d", i), i); err != nil {
			log.Fatal(err)
		}
	}

	rep, err := reshard.Move(ctx, reshard.Options{
		From:           from,
		To:             to,
		BytesPerSecond: 20 << 20, // keep production latency
		Progress: func(p reshard.Progress) {
			if p.Done {
				fmt.Printf("%d/%d keys scanned\n", p.Scanned, p.Total)
			}
		},
	})
	if errors.Is(err, reshard.ErrMoverAlreadyRunning) {
		log.Fatal(err) // another mover of this migration runs: its *reshard.ClientsError names it; let it end
	}
	if err != nil {
		log.Fatal(err) // a *reshard.ClientsError names a process still on the old ring
	}
	fmt.Printf("moved %d keys; %d misplaced after the move\n", rep.Moved, rep.Verify.Misplaced)

	// The new shard holds the keys it owns now.
	d, err := redis.Dial("tcp", addrs[3])
	if err != nil {
		log.Fatal(err)
	}
	defer d.Close()
	n, err := redis.Int(d.Do("DBSIZE"))
	fmt.Println("keys on d:", n, err)
	// Output:
	// 100/100 keys scanned
	// moved 21 keys; 0 misplaced after the move
	// keys on d: 21 <nil>
}

// Check a topology after any manual operation: here keys were restored
// onto one shard of a two-shard ring, without the ring's placement.
func ExampleVerify() {
	addrs := redisAddrs(2) // "host:port" of two redis-servers
	a, err := redis.Dial("tcp", addrs[0])
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	for _, key := range []string{"user:1", "user:2", "user:3", "user:4", "user:5", "user:6"} {
		if _, err := a.Do("SET", key, "restored"); err != nil {
			log.Fatal(err)
		}
	}

	cfg, err := shard.ParseURL("redis-ring://" + strings.Join(addrs, ",") + "?names=a,b")
	if err != nil {
		log.Fatal(err)
	}
	rep, err := reshard.Verify(context.Background(), cfg, reshard.VerifyOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d keys scanned, %d misplaced\n", rep.Scanned, rep.Misplaced)
	slices.SortFunc(rep.Samples, func(x, y reshard.Misplaced) int { return strings.Compare(x.Key, y.Key) })
	for _, m := range rep.Samples {
		fmt.Printf("misplaced: %s, owned by b: %v\n", m.Key, m.Owner == addrs[1])
	}
	// Output:
	// 6 keys scanned, 2 misplaced
	// misplaced: user:1, owned by b: true
	// misplaced: user:6, owned by b: true
}

// End a migration once every process runs the new ring: Finish deletes
// the fence's markers, or says which processes still use the migration.
func ExampleFinish() {
	ctx := context.Background()
	addrs := redisAddrs(4) // "host:port" of four redis-servers
	from, err := shard.ParseURL("redis-ring://" + strings.Join(addrs[:3], ",") + "?names=a,b,c&client_name=auto")
	if err != nil {
		log.Fatal(err)
	}
	to, err := shard.ParseURL("redis-ring://" + strings.Join(addrs, ",") + "?names=a,b,c,d&client_name=auto")
	if err != nil {
		log.Fatal(err)
	}
	// The application, migrating, and the mover, done.
	app := to
	app.Migration = &shard.Migration{From: &from}
	client, err := shard.New(ctx, app)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	for i := range 100 {
		if _, err := client.Do(ctx, "SET", fmt.Sprintf("user:%d", i), i); err != nil {
			log.Fatal(err)
		}
	}
	if _, err := reshard.Move(ctx, reshard.Options{From: from, To: to}); err != nil {
		log.Fatal(err)
	}

	// Too early: the application still routes by the migration.
	rep, err := reshard.Finish(ctx, from, to)
	var ce *reshard.ClientsError
	switch {
	case errors.As(err, &ce) && errors.Is(err, reshard.ErrStillMigrating):
		fmt.Printf("still migrating: %d connection(s)\n", len(ce.Conns)) // ce.Conns[i].Name names the process
	case errors.Is(err, reshard.ErrMisplaced):
		fmt.Println("run the mover again:", err)
	case err != nil:
		log.Fatal(err)
	}

	// The application runs the plain config of the new ring now; its
	// beacons leave CLIENT LIST within a moment.
	if err := client.FinishMigration(); err != nil {
		log.Fatal(err)
	}
	rep, err = reshard.Finish(ctx, from, to)
	for deadline := time.Now().Add(10 * time.Second); errors.Is(err, reshard.ErrStillMigrating) && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		rep, err = reshard.Finish(ctx, from, to)
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("finished: %d keys verified\n", rep.Scanned)
	// Output:
	// still migrating: 3 connection(s)
	// finished: 100 keys verified
}

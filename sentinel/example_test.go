package sentinel_test

import (
	"context"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/sentinel"
)

// Find the current master of a set and follow its failovers.
func ExampleClient() {
	sentinels, masters := sentinelAddrs() // the Sentinels' "host:port", and the master sets they monitor
	c, err := sentinel.New(masters[0], sentinels, sentinel.Options{DialTimeout: time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	addr, _, err := c.MasterAddr(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	failovers := make(chan sentinel.SwitchMaster, 1)
	w := c.Watch(func(sentinelAddr string, ev sentinel.SwitchMaster) {
		select {
		case failovers <- ev: // each Sentinel announces the failover: keep one
		default:
		}
	})
	defer w.Close()
	for w.Connected() < len(sentinels) && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond) // until every subscription is on
	}

	// An operator's failover, for maintenance of the master's host.
	conn, err := redis.Dial("tcp", sentinels[0])
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	if _, err := conn.Do("SENTINEL", "FAILOVER", masters[0]); err != nil {
		fmt.Println(err)
		return
	}
	select {
	case ev := <-failovers:
		now, _, err := c.MasterAddr(ctx)
		fmt.Println("failover from the old master:", ev.OldAddr == addr)
		fmt.Println("the Sentinels name the new one:", now == ev.NewAddr && now != addr, err)
	case <-ctx.Done():
		fmt.Println("no failover seen")
	}
	// Output:
	// failover from the old master: true
	// the Sentinels name the new one: true <nil>
}

func ExampleParseSwitchMaster() {
	ev, err := sentinel.ParseSwitchMaster("mymaster 10.0.0.1 6379 10.0.0.2 6379")
	fmt.Println(ev.Master, ev.OldAddr, ev.NewAddr, err)
	// Output: mymaster 10.0.0.1:6379 10.0.0.2:6379 <nil>
}

// Follow the failovers of every master set of the Sentinels, and ask for
// the master again when a subscription comes back after a loss: a
// failover announced meanwhile was missed.
func ExampleClient_WatchAllWith() {
	sentinels, masters := sentinelAddrs() // the Sentinels' "host:port", and the master sets they monitor
	c, err := sentinel.New(masters[0], sentinels, sentinel.Options{DialTimeout: time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	switched := make(chan string, 1)
	w := c.WatchAllWith(sentinel.WatchHandlers{
		Switch: func(sentinelAddr string, ev sentinel.SwitchMaster) {
			select {
			case switched <- ev.Master:
			default:
			}
		},
		Resubscribed: func(sentinelAddr string) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			if addr, _, err := c.MasterAddr(ctx); err == nil {
				fmt.Println("master", addr)
			}
		},
	})
	defer w.Close()
	deadline := time.Now().Add(30 * time.Second)
	for w.Connected() < len(sentinels) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := w.Err(); err != nil {
		fmt.Println("not subscribed to every Sentinel:", err)
	}

	// A failover of another master set than the Client's.
	conn, err := redis.Dial("tcp", sentinels[0])
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	if _, err := conn.Do("SENTINEL", "FAILOVER", masters[1]); err != nil {
		fmt.Println(err)
		return
	}
	select {
	case master := <-switched:
		fmt.Println("failover of", master)
	case <-time.After(30 * time.Second):
		fmt.Println("no failover seen")
	}
	// Output:
	// failover of master-1
}

// Find the current master, checked with ROLE and ranked by the replicas
// it lists: when the Sentinels disagree and their config epochs cannot
// tell the newer view (a user that may not run SENTINEL MASTER), the
// master the replicas follow wins over a stale one that also says it is
// a master.
func ExampleClient_RankedMasterAddr() {
	sentinels, masters := sentinelAddrs()
	c, err := sentinel.New(masters[0], sentinels, sentinel.Options{DialTimeout: time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	replicas := func(ctx context.Context, addr string) (int, error) {
		conn, err := redis.DialContext(ctx, "tcp", addr, redis.DialReadTimeout(time.Second))
		if err != nil {
			return 0, err
		}
		defer conn.Close()
		role, err := sentinel.CheckRole(ctx, conn)
		if err != nil {
			return 0, err
		}
		if role.Kind != sentinel.RoleMaster {
			return 0, fmt.Errorf("%s is a %s", addr, role.Kind)
		}
		return len(role.Replicas), nil
	}
	addr, _, err := c.RankedMasterAddr(ctx, replicas)
	if err != nil {
		fmt.Println(err)
		return
	}
	n, err := replicas(ctx, addr)
	fmt.Println("a master with its replica:", n, err)
	// Output:
	// a master with its replica: 1 <nil>
}

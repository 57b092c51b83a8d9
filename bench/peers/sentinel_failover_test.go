package peers

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	redigo "github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// failoverClient is one client under the failover measurement: set and
// get run one command each.
type failoverClient struct {
	name string
	set  func(ctx context.Context, k, v string) error
	get  func(ctx context.Context, k string) (string, error)
}

// failoverSeen is what one client saw around the failover.
type failoverSeen struct {
	mu        sync.Mutex
	armed     bool
	armedAt   time.Time // when the killed master was reaped
	firstFail time.Time // the first failure after the kill
	firstOK   time.Time // the first success of a call started after armedAt
	fails     int
	samples   []string // a few failure messages
	maxWait   time.Duration
	acked     map[string]string
	ackedAt   map[string]time.Time
	unsure    map[string][]string
	ops       atomic.Int64
	opsBefore int64
}

func (s *failoverSeen) done(k, v string, start time.Time, err error, isSet bool) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.armed {
		s.maxWait = max(s.maxWait, now.Sub(start))
	}
	if err != nil {
		if isSet {
			s.unsure[k] = append(s.unsure[k], v)
		}
		if s.armed {
			s.fails++
			if s.firstFail.IsZero() {
				s.firstFail = now
			}
			if len(s.samples) < 3 {
				s.samples = append(s.samples, err.Error())
			}
		}
		return
	}
	if isSet {
		s.acked[k], s.ackedAt[k] = v, now
	}
	if s.armed && !s.armedAt.IsZero() && start.After(s.armedAt) && s.firstOK.IsZero() {
		s.firstOK = now
	}
}

// TestSentinelFailoverPeers kills the master of one Sentinel-monitored
// set while shardis (one Sentinel shard, failing fast and with
// FailoverWait) and go-redis's FailoverClient (default options) each run 8
// goroutines of SET+GET against it, and reports for each when the first
// command started after the kill succeeded, measured from the kill and
// from the +switch-master message (subscribed to here, outside the
// clients), how many commands failed and the longest call.
func TestSentinelFailoverPeers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Sentinels and kills a master")
	}
	set := redistest.StartSentinelsTB(t, redistest.SentinelOptions{Shards: 1, DownAfter: time.Second, FailoverTimeout: 2 * time.Second})
	master, err := set.Master(0)
	if err != nil {
		t.Fatal(err)
	}
	replica, err := set.Replica(0)
	if err != nil {
		t.Fatal(err)
	}
	mset := set.Shards[0].Name

	shardisClient := func(wait time.Duration) *shard.Client {
		cfg := shard.Config{
			Shards: []ring.Shard{{Name: "only", Weight: 1}},
			Sentinel: shard.SentinelOptions{Addrs: set.Addrs(), FailoverWait: wait,
				Shards: []shard.SentinelShard{{Name: "only", MasterName: mset}}},
		}
		c, err := shard.New(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	fromShardis := func(name string, c *shard.Client) failoverClient {
		return failoverClient{name: name,
			set: func(ctx context.Context, k, v string) error { _, err := c.Do(ctx, "SET", k, v); return err },
			get: func(ctx context.Context, k string) (string, error) { return redigo.String(c.Do(ctx, "GET", k)) },
		}
	}
	gr := goredis.NewFailoverClient(&goredis.FailoverOptions{MasterName: mset, SentinelAddrs: set.Addrs()})
	t.Cleanup(func() { gr.Close() })
	clients := []failoverClient{
		fromShardis("shardis (fail fast)", shardisClient(0)),
		fromShardis("shardis (FailoverWait 5s)", shardisClient(5*time.Second)),
		{name: "go-redis FailoverClient", set: func(ctx context.Context, k, v string) error { return gr.Set(ctx, k, v, 0).Err() },
			get: func(ctx context.Context, k string) (string, error) { return gr.Get(ctx, k).Result() }},
	}

	// Our own +switch-master subscriptions, to time the promotion: the
	// first message from any Sentinel (the leader of the failover sends
	// it first).
	var switchedAt atomic.Pointer[time.Time]
	for _, sen := range set.Sentinels {
		sub, err := redigo.Dial("tcp", sen.Addr)
		if err != nil {
			t.Fatal(err)
		}
		psc := redigo.PubSubConn{Conn: sub}
		if err := psc.Subscribe("+switch-master"); err != nil {
			t.Fatal(err)
		}
		subDone := make(chan struct{})
		go func() {
			defer close(subDone)
			for {
				switch v := psc.Receive().(type) {
				case error:
					return
				case redigo.Message:
					if strings.HasPrefix(string(v.Data), mset+" ") {
						now := time.Now()
						switchedAt.CompareAndSwap(nil, &now)
					}
				}
			}
		}()
		defer func() { sub.Close(); <-subDone }()
	}

	stop := make(chan struct{})
	seen := make([]*failoverSeen, len(clients))
	var wg sync.WaitGroup
	for ci, cl := range clients {
		s := &failoverSeen{acked: map[string]string{}, ackedAt: map[string]time.Time{}, unsure: map[string][]string{}}
		seen[ci] = s
		for g := range 8 {
			wg.Go(func() {
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					k, v := fmt.Sprintf("fo:%d:%d:%d", ci, g, i%200), fmt.Sprint(i)
					start := time.Now()
					err := cl.set(ctx, k, v)
					s.done(k, v, start, err, true)
					if err == nil {
						start = time.Now()
						got, err := cl.get(ctx, k)
						if err == nil && got != v {
							err = fmt.Errorf("GET %s = %q after SET %q", k, got, v)
						}
						s.done(k, "", start, err, false)
					}
					cancel()
					s.ops.Add(1)
				}
			})
		}
	}
	time.Sleep(2 * time.Second)
	for _, s := range seen {
		s.mu.Lock()
		s.armed = true
		s.opsBefore = s.ops.Load()
		s.mu.Unlock()
	}
	killedAt := time.Now()
	if err := master.Kill(); err != nil {
		t.Fatal(err)
	}
	// The master is reaped: a call started from now on cannot be served by it.
	goneAt := time.Now()
	for _, s := range seen {
		s.mu.Lock()
		s.armedAt = goneAt
		s.mu.Unlock()
	}
	deadline := time.Now().Add(30 * time.Second)
	for switchedAt.Load() == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if switchedAt.Load() == nil {
		close(stop)
		wg.Wait()
		t.Fatal("no +switch-master within 30s")
	}
	sw := *switchedAt.Load()
	// Let every client recover (go-redis may need its own time), then stop.
	for time.Now().Before(sw.Add(5 * time.Second)) {
		recovered := true
		for _, s := range seen {
			s.mu.Lock()
			recovered = recovered && !s.firstOK.IsZero()
			s.mu.Unlock()
		}
		if recovered {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()

	t.Logf("kill -> +switch-master: %v", sw.Sub(killedAt).Round(time.Millisecond))
	t.Logf("%-28s %8s %14s %22s %8s %14s %12s", "client", "ops/s", "first failure", "recovered after kill", "failed", "longest call", "lost writes")
	for ci, cl := range clients {
		s := seen[ci]
		lost := 0
		for k, v := range s.acked {
			got, err := replica.Do("GET", k)
			if err != nil {
				t.Fatal(err)
			}
			if got != v && !containsValue(s.unsure[k], got) && s.ackedAt[k].Before(killedAt.Add(-200*time.Millisecond)) {
				lost++
			}
		}
		rate := float64(s.opsBefore) / 2
		firstOK := "never"
		if !s.firstOK.IsZero() {
			firstOK = fmt.Sprintf("%v (%+v sw)", s.firstOK.Sub(killedAt).Round(time.Millisecond), s.firstOK.Sub(sw).Round(time.Millisecond))
		}
		firstFail := "none"
		if !s.firstFail.IsZero() {
			firstFail = s.firstFail.Sub(killedAt).Round(time.Millisecond).String()
		}
		t.Logf("%-28s %8.0f %14s %22s %8d %14v %12d", cl.name, rate, firstFail, firstOK, s.fails, s.maxWait.Round(time.Millisecond), lost)
		for _, m := range s.samples {
			t.Logf("    e.g. %s", m)
		}
		if lost > 0 {
			t.Errorf("%s lost %d acknowledged writes made more than 200ms before the kill", cl.name, lost)
		}
		// The timing is for orientation (shard's TestSentinelFailoverUnderLoad
		// asserts the 0.5 s bound); here shardis must simply recover.
		if strings.HasPrefix(cl.name, "shardis") && s.firstOK.IsZero() {
			t.Errorf("%s did not recover within 5 s of +switch-master", cl.name)
		}
	}
}

func containsValue(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

package peers

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	redigo "github.com/gomodule/redigo/redis"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/shardis/shardis/bench"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// The sizes of the pub/sub workloads.
const (
	pubPerIter = 10_000 // messages published (and received) per iteration
	pubBatch   = 1_000  // PUBLISH or SPUBLISH commands per pipeline
)

// counter counts received messages and says when a target is reached.
type counter struct {
	n      atomic.Int64
	target atomic.Int64
	done   chan struct{}
}

func newCounter() *counter { return &counter{done: make(chan struct{}, 1)} }

func (c *counter) add() {
	if c.n.Add(1) == c.target.Load() {
		c.done <- struct{}{}
	}
}

// expect arms the counter for n more messages and returns the wait.
func (c *counter) expect(n int) func() error {
	c.target.Store(c.n.Load() + int64(n))
	return func() error {
		select {
		case <-c.done:
			return nil
		case <-time.After(30 * time.Second):
			return fmt.Errorf("received %d of %d messages", c.n.Load(), c.target.Load())
		}
	}
}

// pubsubCase is one client's subscriber (already running, counting into
// cnt) and its pipelined publisher of n messages, each of which must reach
// receivers subscribers (< 0: not checked).
type pubsubCase struct {
	name      string
	cnt       *counter
	publish   func(n, receivers int) error
	receivers int
}

// runPubSub measures each case: one op is one message published and
// received. Each case first publishes until its subscriber has seen a
// message, without checking the number of receivers, then until a
// batch over every channel reaches them all (so that every subscription
// is in place), untimed.
func runPubSub(b *testing.B, cases []pubsubCase) {
	for _, pc := range cases {
		b.Run(pc.name, func(b *testing.B) {
			deadline := time.Now().Add(10 * time.Second)
			for pc.cnt.n.Load() == 0 {
				if time.Now().After(deadline) {
					b.Fatal("the subscriber never received a message")
				}
				if err := pc.publish(3, -1); err != nil {
					b.Fatal(err)
				}
				time.Sleep(10 * time.Millisecond)
			}
			// Every channel's subscription in place (a client may
			// subscribe on each master in turn): one batch, which cycles
			// over every channel, reaches the expected receivers.
			for {
				err := pc.publish(pubBatch, pc.receivers)
				if err == nil {
					break
				}
				if time.Now().After(deadline) {
					b.Fatal(err)
				}
				time.Sleep(10 * time.Millisecond)
			}
			time.Sleep(50 * time.Millisecond) // let the warm-up messages drain
			b.ReportAllocs()
			m := startMeter()
			for b.Loop() {
				wait := pc.cnt.expect(pubPerIter)
				if err := pc.publish(pubPerIter, pc.receivers); err != nil {
					b.Fatal(err)
				}
				if err := wait(); err != nil {
					b.Fatal(err)
				}
			}
			m.report(b, pubPerIter)
		})
	}
}

// Publishers: pipelines of pubBatch commands cycling over channels. Each
// is given the number of subscribers every channel has (receivers; < 0
// when not known, as during the warm-up): every command must have a
// result, and every PUBLISH or SPUBLISH reply must be that count, so that
// a client that lost a publish, or published to nobody, fails the
// workload instead of looking faster.

// checkPublishReply checks the reply of one PUBLISH or SPUBLISH to ch: an
// integer count of receivers, equal to receivers when that is >= 0.
func checkPublishReply(cmd, ch string, n int64, err error, receivers int) error {
	if err != nil {
		return fmt.Errorf("%w: %s %q: %w", bench.ErrWorkload, cmd, ch, err)
	}
	if n < 0 || (receivers >= 0 && n != int64(receivers)) {
		return fmt.Errorf("%w: %s %q: %d receivers, want %d", bench.ErrWorkload, cmd, ch, n, receivers)
	}
	return nil
}

// shardisPipe is the part of a shard.Pipeline the publisher uses.
type shardisPipe interface {
	Send(name string, args ...any)
	Exec(ctx context.Context) ([]shard.Result, error)
}

// shardisPipeline returns the pipelines of c for shardisPublish.
func shardisPipeline(c *shard.Client) func() shardisPipe {
	return func() shardisPipe { return c.Pipeline() }
}

func shardisPublish(ctx context.Context, newPipe func() shardisPipe, cmd string, channels []string) func(n, receivers int) error {
	return func(n, receivers int) error {
		for sent := 0; sent < n; {
			p := newPipe()
			k := min(pubBatch, n-sent)
			for i := 0; i < k; i++ {
				p.Send(cmd, channels[(sent+i)%len(channels)], value)
			}
			res, err := p.Exec(ctx)
			if err != nil {
				return fmt.Errorf("%w: %s pipeline: %w", bench.ErrWorkload, cmd, err)
			}
			if len(res) != k {
				return fmt.Errorf("%w: %s pipeline: %d results for %d commands", bench.ErrWorkload, cmd, len(res), k)
			}
			for i, r := range res {
				ch := channels[(sent+i)%len(channels)]
				n, ok := r.Reply.(int64)
				if r.Err == nil && !ok {
					return fmt.Errorf("%w: %s %q: unexpected reply %T", bench.ErrWorkload, cmd, ch, r.Reply)
				}
				if err := checkPublishReply(cmd, ch, n, r.Err, receivers); err != nil {
					return err
				}
			}
			sent += k
		}
		return nil
	}
}

func goRedisPublish(ctx context.Context, c redis.UniversalClient, sharded bool, channels []string) func(n, receivers int) error {
	cmd := "PUBLISH"
	if sharded {
		cmd = "SPUBLISH"
	}
	return func(n, receivers int) error {
		for sent := 0; sent < n; {
			k := min(pubBatch, n-sent)
			cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
				for i := 0; i < k; i++ {
					ch := channels[(sent+i)%len(channels)]
					if sharded {
						p.SPublish(ctx, ch, value)
					} else {
						p.Publish(ctx, ch, value)
					}
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("%w: %s pipeline: %w", bench.ErrWorkload, cmd, err)
			}
			if len(cmds) != k {
				return fmt.Errorf("%w: %s pipeline: %d results for %d commands", bench.ErrWorkload, cmd, len(cmds), k)
			}
			for i, c := range cmds {
				ch := channels[(sent+i)%len(channels)]
				ic, ok := c.(*redis.IntCmd)
				if !ok {
					return fmt.Errorf("%w: %s %q: unexpected command type %T", bench.ErrWorkload, cmd, ch, c)
				}
				n, err := ic.Result()
				if err := checkPublishReply(cmd, ch, n, err, receivers); err != nil {
					return err
				}
			}
			sent += k
		}
		return nil
	}
}

func rueidisPublish(ctx context.Context, c rueidis.Client, sharded bool, channels []string) func(n, receivers int) error {
	cmd := "PUBLISH"
	if sharded {
		cmd = "SPUBLISH"
	}
	return func(n, receivers int) error {
		for sent := 0; sent < n; {
			k := min(pubBatch, n-sent)
			cmds := make(rueidis.Commands, 0, k)
			for i := 0; i < k; i++ {
				ch := channels[(sent+i)%len(channels)]
				if sharded {
					cmds = append(cmds, c.B().Spublish().Channel(ch).Message(value).Build())
				} else {
					cmds = append(cmds, c.B().Publish().Channel(ch).Message(value).Build())
				}
			}
			res := c.DoMulti(ctx, cmds...)
			if len(res) != k {
				return fmt.Errorf("%w: %s DoMulti: %d results for %d commands", bench.ErrWorkload, cmd, len(res), k)
			}
			for i, r := range res {
				n, err := r.AsInt64()
				if err := checkPublishReply(cmd, channels[(sent+i)%len(channels)], n, err, receivers); err != nil {
					return err
				}
			}
			sent += k
		}
		return nil
	}
}

// Subscribers: each counts into cnt until ctx ends.

func shardisSubscriber(tb testing.TB, ctx context.Context, c *shard.Client, sharded bool, channels []string, cnt *counter) {
	tb.Helper()
	var sub *shard.Subscription
	var err error
	if sharded {
		sub, err = c.SSubscribe(ctx, channels...)
	} else {
		sub, err = c.Subscribe(ctx, channels...)
	}
	if err != nil {
		tb.Fatal(err)
	}
	go func() {
		for {
			v, err := sub.Receive(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				continue
			}
			if _, ok := v.(redigo.Message); ok {
				cnt.add()
			}
		}
	}()
	tb.Cleanup(func() { sub.Close() })
}

func goRedisSubscriber(tb testing.TB, ctx context.Context, ps *redis.PubSub, cnt *counter) {
	tb.Helper()
	go func() {
		for {
			if _, err := ps.ReceiveMessage(ctx); err != nil {
				if ctx.Err() != nil {
					return
				}
				continue
			}
			cnt.add()
		}
	}()
	tb.Cleanup(func() { ps.Close() })
}

// rueidisSubscriber runs Receive, and runs it again when it returns with
// an error (a lost connection), as its documentation asks of callers.
func rueidisSubscriber(ctx context.Context, c rueidis.Client, subscribe func() rueidis.Completed, fn func(rueidis.PubSubMessage)) {
	go func() {
		for ctx.Err() == nil {
			if err := c.Receive(ctx, subscribe(), fn); err != nil && ctx.Err() == nil {
				time.Sleep(10 * time.Millisecond)
			}
		}
	}()
}

// BenchmarkPubSubOneToOne publishes 10,000 messages per iteration to one
// channel on one standalone server in pipelines of 1,000 PUBLISH, and
// waits until the subscriber, on the same client, has received them all:
// shardis (ring of one shard, Subscription.Receive), go-redis v9
// (PubSub.ReceiveMessage) and rueidis (Receive callback). One op is one
// message.
func BenchmarkPubSubOneToOne(b *testing.B) {
	srv := redistest.StartTB(b, redistest.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	// A channel per client, so that each case's messages reach only its
	// own subscriber.
	chS, chG, chR := []string{"bench:1to1:shardis"}, []string{"bench:1to1:goredis"}, []string{"bench:1to1:rueidis"}

	sc, err := shard.New(ctx, shard.Config{Shards: []ring.Shard{{Addr: srv.Addr, Weight: 1}}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sc.Close() })
	sCnt := newCounter()
	shardisSubscriber(b, ctx, sc, false, chS, sCnt)

	g := redis.NewClient(&redis.Options{Addr: srv.Addr})
	b.Cleanup(func() { g.Close() })
	gCnt := newCounter()
	goRedisSubscriber(b, ctx, g.Subscribe(ctx, chG...), gCnt)

	r := newRueidis(b, []string{srv.Addr})
	rCnt := newCounter()
	rueidisSubscriber(ctx, r, func() rueidis.Completed { return r.B().Subscribe().Channel(chR...).Build() },
		func(rueidis.PubSubMessage) { rCnt.add() })

	runPubSub(b, []pubsubCase{
		{"shardis", sCnt, shardisPublish(ctx, shardisPipeline(sc), "PUBLISH", chS), 1},
		{"goredis", gCnt, goRedisPublish(ctx, g, false, chG), 1},
		{"rueidis", rCnt, rueidisPublish(ctx, r, false, chR), 1},
	})
}

// fanInChannels returns, for each of the three masters of a fresh
// three-master cluster (slots 0-5460, 5461-10922, 10923-16383), perMaster
// channels sharing one hash tag in that master's slots, all prefixed.
func fanInChannels(prefix string, perMaster int) (all []string, bySlot [][]string) {
	bounds := []int{0, 5461, 10923, 16384}
	for m := 0; m < 3; m++ {
		for i := 0; ; i++ {
			tag := fmt.Sprintf("%s%d", prefix, i)
			if s := cluster.Slot(tag); s >= bounds[m] && s < bounds[m+1] {
				var group []string
				for j := 0; j < perMaster; j++ {
					group = append(group, fmt.Sprintf("{%s}:%d", tag, j))
				}
				bySlot = append(bySlot, group)
				all = append(all, group...)
				break
			}
		}
	}
	return all, bySlot
}

// BenchmarkPubSubShardedFanIn publishes 10,000 messages per iteration with
// SPUBLISH, in pipelines of 1,000 spread over 30 shard channels (ten on
// each master of a three-master cluster), to one subscriber per client
// that receives from all three masters: shardis (one Subscription over
// all 30 channels), go-redis v9 and rueidis (one SSUBSCRIBE per master:
// both need a subscription per slot, see docs/pubsub.md). One op is one
// message.
func BenchmarkPubSubShardedFanIn(b *testing.B) {
	cl := redistest.StartClusterTB(b, 3, 0, redistest.Options{})
	seeds := cl.Seeds()
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)

	sc := newShardisCluster(b, seeds)
	sAll, _ := fanInChannels("fs", 10)
	sCnt := newCounter()
	shardisSubscriber(b, ctx, sc, true, sAll, sCnt)

	g := newGoRedisCluster(b, seeds)
	gAll, gSlots := fanInChannels("fg", 10)
	gCnt := newCounter()
	for _, group := range gSlots {
		goRedisSubscriber(b, ctx, g.SSubscribe(ctx, group...), gCnt)
	}

	r := newRueidis(b, seeds)
	rAll, rSlots := fanInChannels("fr", 10)
	rCnt := newCounter()
	for _, group := range rSlots {
		rueidisSubscriber(ctx, r, func() rueidis.Completed { return r.B().Ssubscribe().Channel(group...).Build() },
			func(rueidis.PubSubMessage) { rCnt.add() })
	}

	runPubSub(b, []pubsubCase{
		{"shardis", sCnt, shardisPublish(ctx, shardisPipeline(sc), "SPUBLISH", sAll), 1},
		{"goredis-cluster", gCnt, goRedisPublish(ctx, g, true, gAll), 1},
		{"rueidis", rCnt, rueidisPublish(ctx, r, true, rAll), 1},
	})
}

// arrivalLog records when the messages of one subscriber arrived.
type arrivalLog struct {
	mu sync.Mutex
	at []time.Time
}

func (a *arrivalLog) add() {
	a.mu.Lock()
	a.at = append(a.at, time.Now())
	a.mu.Unlock()
}

// firstAfter returns the first arrival after t, or the zero time.
func (a *arrivalLog) firstAfter(t time.Time) time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, at := range a.at {
		if at.After(t) {
			return at
		}
	}
	return time.Time{}
}

// BenchmarkPubSubFailoverGap kills the master that owns one shard channel
// of a 3+3 cluster, to which shardis, go-redis v9 and rueidis each hold an
// SSUBSCRIBE, while a publisher sends SPUBLISH every 2 ms straight to the
// replica that will take over (which delivers to whoever is subscribed on
// it, from its first instant as master) and watches its ROLE. It reports,
// per client, the time from the promotion to the first message received (ms-after-promotion; -1 when
// none arrived within 20 s). It runs once: use -benchtime=1x.
func BenchmarkPubSubFailoverGap(b *testing.B) {
	cl := redistest.StartClusterTB(b, 3, 1, redistest.Options{NodeTimeout: time.Second})
	seeds := cl.Seeds()
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	channel := "{gap}:news"
	victim, err := cl.MasterOfSlot(cluster.Slot(channel))
	if err != nil {
		b.Fatal(err)
	}
	replica, err := cl.ReplicaOf(victim)
	if err != nil {
		b.Fatal(err)
	}
	logs := map[string]*arrivalLog{"shardis": {}, "goredis-cluster": {}, "rueidis": {}}

	sc := newShardisCluster(b, seeds)
	sub, err := sc.SSubscribe(ctx, channel)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sub.Close() })
	go func() {
		for {
			v, err := sub.Receive(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				continue
			}
			if _, ok := v.(redigo.Message); ok {
				logs["shardis"].add()
			}
		}
	}()
	g := newGoRedisCluster(b, seeds)
	ps := g.SSubscribe(ctx, channel)
	b.Cleanup(func() { ps.Close() })
	go func() {
		for {
			if _, err := ps.ReceiveMessage(ctx); err != nil {
				if ctx.Err() != nil {
					return
				}
				continue
			}
			logs["goredis-cluster"].add()
		}
	}()
	r := newRueidis(b, seeds)
	rueidisSubscriber(ctx, r, func() rueidis.Completed { return r.B().Ssubscribe().Channel(channel).Build() },
		func(rueidis.PubSubMessage) { logs["rueidis"].add() })

	// Everyone is subscribed: the master counts three subscribers.
	conn, err := redigo.Dial("tcp", victim.Addr)
	if err != nil {
		b.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := redigo.Int(conn.Do("SPUBLISH", channel, "warm-up"))
		if err == nil && n == 3 {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("subscribers in place: %d, %v", n, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	conn.Close()

	pub, err := redigo.Dial("tcp", replica.Addr)
	if err != nil {
		b.Fatal(err)
	}
	defer pub.Close()
	b.ResetTimer()
	killed := time.Now()
	if err := victim.Kill(); err != nil {
		b.Fatal(err)
	}
	var promoted time.Time
	for i := 0; ; i++ {
		if promoted.IsZero() {
			if role, err := redigo.Values(pub.Do("ROLE")); err == nil && len(role) > 0 {
				if r, _ := redigo.String(role[0], nil); r == "master" {
					promoted = time.Now()
				}
			}
		}
		_, _ = pub.Do("SPUBLISH", channel, strconv.Itoa(i))
		if !promoted.IsZero() && time.Since(promoted) > 20*time.Second {
			break
		}
		done := !promoted.IsZero()
		for _, l := range logs {
			done = done && !l.firstAfter(promoted).IsZero()
		}
		if done && time.Since(promoted) > time.Second {
			break
		}
		if time.Since(killed) > 30*time.Second {
			b.Fatal(errors.New("no promotion within 30 s"))
		}
		time.Sleep(2 * time.Millisecond)
	}
	b.StopTimer()
	b.Logf("promotion %v after the kill", promoted.Sub(killed).Round(time.Millisecond))
	for _, name := range []string{"shardis", "goredis-cluster", "rueidis"} {
		first := logs[name].firstAfter(promoted)
		gap := -1.0
		if !first.IsZero() {
			gap = float64(first.Sub(promoted).Microseconds()) / 1e3
		}
		b.Logf("%s: first message %.0f ms after the promotion", name, gap)
		b.ReportMetric(gap, name+"-ms-after-promotion")
	}
}

package peers

import (
	"context"
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/shardis/shardis/bench"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// dropShardisPipe is a shardis contestant whose pipelines lose their last
// reply.
type dropShardisPipe struct{ shardisPipe }

func (d dropShardisPipe) Exec(ctx context.Context) ([]shard.Result, error) {
	res, err := d.shardisPipe.Exec(ctx)
	if len(res) > 0 {
		res = res[:len(res)-1]
	}
	return res, err
}

// The publishers of the pub/sub benchmarks must fail, not look faster,
// when a client answers fewer results than the PUBLISH commands it was
// given, or when a PUBLISH reached another number of subscribers than the
// benchmark set up.
func TestReview15PublishersCheckReplies(t *testing.T) {
	srv := redistest.StartTB(t, redistest.Options{})
	ctx := context.Background()
	channels := []string{"pr:a", "pr:b"}

	// One subscriber on each channel, confirmed by the server.
	subc := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { subc.Close() })
	ps := subc.Subscribe(ctx, channels...)
	t.Cleanup(func() { ps.Close() })
	for range channels {
		if _, err := ps.Receive(ctx); err != nil {
			t.Fatal(err)
		}
	}

	sc, err := shard.New(ctx, shard.Config{Shards: []ring.Shard{{Addr: srv.Addr, Weight: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sc.Close() })
	g := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { g.Close() })
	r := newRueidis(t, []string{srv.Addr})
	dropPipe := func() shardisPipe { return dropShardisPipe{sc.Pipeline()} }

	const n = 5 // messages per run: over both channels, in one pipeline
	for _, tc := range []struct {
		name      string
		publish   func(n, receivers int) error
		receivers int
		fail      bool
	}{
		{"shardis", shardisPublish(ctx, shardisPipeline(sc), "PUBLISH", channels), 1, false},
		{"shardis unchecked receivers", shardisPublish(ctx, shardisPipeline(sc), "PUBLISH", channels), -1, false},
		{"shardis dropping a reply", shardisPublish(ctx, dropPipe, "PUBLISH", channels), 1, true},
		{"shardis dropping a reply, unchecked receivers", shardisPublish(ctx, dropPipe, "PUBLISH", channels), -1, true},
		{"shardis with another receiver count", shardisPublish(ctx, shardisPipeline(sc), "PUBLISH", channels), 2, true},
		{"go-redis", goRedisPublish(ctx, g, false, channels), 1, false},
		{"go-redis dropping a reply", goRedisPublish(ctx, dropGoRedis{g}, false, channels), 1, true},
		{"go-redis with another receiver count", goRedisPublish(ctx, g, false, channels), 0, true},
		{"rueidis", rueidisPublish(ctx, r, false, channels), 1, false},
		{"rueidis dropping a reply", rueidisPublish(ctx, dropRueidis{r}, false, channels), 1, true},
		{"rueidis dropping a reply, unchecked receivers", rueidisPublish(ctx, dropRueidis{r}, false, channels), -1, true},
		{"rueidis with another receiver count", rueidisPublish(ctx, r, false, channels), 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.publish(n, tc.receivers)
			if tc.fail {
				if !errors.Is(err, bench.ErrWorkload) {
					t.Errorf("got %v, want an error wrapping bench.ErrWorkload", err)
				}
			} else if err != nil {
				t.Error(err)
			}
		})
	}
}

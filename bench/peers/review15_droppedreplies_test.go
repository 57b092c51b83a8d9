package peers

import (
	"context"
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/shardis/shardis/bench"
	"github.com/shardis/shardis/internal/redistest"
)

// dropGoRedis is a go-redis contestant that loses the last reply of every
// pipeline: its Pipelined returns one command fewer than it sent.
type dropGoRedis struct{ redis.UniversalClient }

func (d dropGoRedis) Pipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error) {
	cmds, err := d.UniversalClient.Pipelined(ctx, fn)
	if len(cmds) > 0 {
		cmds = cmds[:len(cmds)-1]
	}
	return cmds, err
}

// dropRueidis is a rueidis contestant that loses the last reply of every
// DoMulti.
type dropRueidis struct{ rueidis.Client }

func (d dropRueidis) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	res := d.Client.DoMulti(ctx, cmds...)
	if len(res) > 0 {
		res = res[:len(res)-1]
	}
	return res
}

// A contestant that answers fewer results than the commands it was given
// did less work than the others: the pipelined workloads must fail, not
// report it faster.
func TestReview15PipelinedWorkloadsCountReplies(t *testing.T) {
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	ctx := context.Background()
	keys := bench.Keys("dr", 20)
	g := newGoRedisRing(t, servers)
	r := newRueidis(t, []string{servers[0].Addr})
	for _, tc := range []struct {
		name string
		run  func() error
		fail bool
	}{
		{"go-redis pipelined", func() error { return goRedisPipelined(ctx, g, keys, value, 8) }, false},
		{"go-redis pipelined dropping a reply", func() error { return goRedisPipelined(ctx, dropGoRedis{g}, keys, value, 8) }, true},
		{"go-redis MGET", func() error { return goRedisMGET(ctx, g, keys, len(value)) }, false},
		{"go-redis MGET dropping a reply", func() error { return goRedisMGET(ctx, dropGoRedis{g}, keys, len(value)) }, true},
		{"rueidis pipelined", func() error { return rueidisPipelined(ctx, r, keys, value, 8) }, false},
		{"rueidis pipelined dropping a reply", func() error { return rueidisPipelined(ctx, dropRueidis{r}, keys, value, 8) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
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

package shard_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// A ring changed by a migration (a shard added, removed, or reweighted)
// moves the channels and shard channels whose shard changes at the
// switch. Each must end on its new shard alone, counted as a gap; one
// unsubscribed right after the switch, while it moves, must be on no
// shard at all (PUBSUB CHANNELS and SHARDCHANNELS on every server); and
// what is published after the move comes once, in order.
func TestReview21PubSubRingChangeMovesWithoutStrays(t *testing.T) {
	cases := []struct {
		name     string
		from, to func(s []*redistest.Server) shard.Config
	}{
		{"added", func(s []*redistest.Server) shard.Config { return ringConfig(s[:2]) },
			func(s []*redistest.Server) shard.Config { return ringConfig(s) }},
		{"removed", func(s []*redistest.Server) shard.Config { return ringConfig(s) },
			func(s []*redistest.Server) shard.Config { return ringConfig(s[:2]) }},
		{"reweighted", func(s []*redistest.Server) shard.Config { return ringConfig(s) },
			func(s []*redistest.Server) shard.Config {
				cfg := ringConfig(s)
				cfg.Shards[1].Weight = 4
				return cfg
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			servers := redistest.StartNTB(t, 3, redistest.Options{})
			from, to := tc.from(servers), tc.to(servers)
			c := newClient(t, from)
			oldRing, err := shard.NewRingRouter(from.RingConfig())
			require.NoError(t, err)
			newRing, err := shard.NewRingRouter(to.RingConfig())
			require.NoError(t, err)
			// Two channels and a shard channel whose shard changes, and a
			// channel that stays.
			var moving []string
			staying := ""
			for i := 0; len(moving) < 3 || staying == ""; i++ {
				require.Less(t, i, 100000)
				n := fmt.Sprintf("r21ring:%s:%d", tc.name, i)
				was, err := oldRing.Route(n)
				require.NoError(t, err)
				is, err := newRing.Route(n)
				require.NoError(t, err)
				switch {
				case was.Addr != is.Addr && len(moving) < 3:
					moving = append(moving, n)
				case was.Addr == is.Addr && staying == "":
					staying = n
				}
			}
			kept, left, sharded := moving[0], moving[1], moving[2]
			sub, err := c.NewSubscription(shard.SubscriptionOptions{})
			require.NoError(t, err)
			defer sub.Close()
			require.NoError(t, sub.Subscribe(ctx, kept, left, staying))
			require.NoError(t, sub.SSubscribe(ctx, sharded))
			for range 4 { // the confirmations
				_, err := sub.Receive(ctx)
				require.NoError(t, err)
			}

			require.NoError(t, c.StartMigration(ctx, to))
			require.NoError(t, c.ArmMigration())
			require.NoError(t, sub.Unsubscribe(ctx, left))
			require.NoError(t, c.FinishMigration())

			where := func(kind string) map[string][]string {
				out := map[string][]string{}
				for _, s := range servers {
					r, err := s.Do("PUBSUB", kind, "r21ring:*")
					require.NoError(t, err)
					if names := strings.Fields(r); len(names) > 0 {
						slices.Sort(names)
						out[s.Addr] = names
					}
				}
				return out
			}
			wantChannels := map[string][]string{}
			for _, n := range []string{kept, staying} {
				owner, err := newRing.Route(n)
				require.NoError(t, err)
				wantChannels[owner.Addr] = append(wantChannels[owner.Addr], n)
				slices.Sort(wantChannels[owner.Addr])
			}
			owner, err := newRing.Route(sharded)
			require.NoError(t, err)
			wantShard := map[string][]string{owner.Addr: {sharded}}
			waitFor(t, 30*time.Second, "each name on its new shard alone", func() bool {
				return assert.ObjectsAreEqual(wantChannels, where("CHANNELS")) &&
					assert.ObjectsAreEqual(wantShard, where("SHARDCHANNELS"))
			})

			const count = 20
			for i := 1; i <= count; i++ {
				for _, cmd := range [][2]string{{"PUBLISH", kept}, {"PUBLISH", staying}, {"SPUBLISH", sharded}, {"PUBLISH", left}} {
					n, err := redis.Int(c.Do(ctx, cmd[0], cmd[1], strconv.Itoa(i)))
					require.NoError(t, err)
					want := 1
					if cmd[1] == left {
						want = 0
					}
					require.Equal(t, want, n, "%s %s", cmd[0], cmd[1])
				}
			}
			got := map[string][]string{}
			confirmed := 0
			for total := 0; total < 3*count || confirmed == 0; {
				rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
				v, err := sub.Receive(rctx)
				rcancel()
				require.NoError(t, err, "got %v", got)
				switch m := v.(type) {
				case redis.Message:
					got[m.Channel] = append(got[m.Channel], string(m.Data))
					total++
				case redis.Subscription:
					if m.Kind == "unsubscribe" && m.Channel == left {
						confirmed++
					}
				}
			}
			var want []string
			for i := 1; i <= count; i++ {
				want = append(want, strconv.Itoa(i))
			}
			for _, n := range []string{kept, staying, sharded} {
				assert.Equal(t, want, got[n], n)
			}
			assert.Empty(t, got[left])
			assert.Equal(t, 1, confirmed, "one confirmation of the unsubscribe")
			assert.Zero(t, sub.Buffered(), "nothing more")
			st := sub.Stats()
			assert.GreaterOrEqual(t, st.Resubscribed, int64(2), "the moved channel and shard channel are gaps: %+v", st)
		})
	}
}

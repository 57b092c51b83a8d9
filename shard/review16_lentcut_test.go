package shard_test

import (
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview16ForEachShardCloseCutReadOutcome: when Close cuts off a
// BLPOP on a connection lent to a ForEachShard function, a GET sent
// after it, whose reply is unread too, cannot have changed anything: the
// hooks report it OutcomeFailed, and only the BLPOP (a write: it pops)
// OutcomeUnknown, in the Pipeline event of the two. Both for the GET sent
// with Do after the BLPOP was queued and for the two flushed together.
func TestReview16ForEachShardCloseCutReadOutcome(t *testing.T) {
	send := map[string]func(conn redis.Conn) error{
		"Do": func(conn redis.Conn) error {
			if err := conn.Send("BLPOP", "r16lentread:list", 0); err != nil {
				return err
			}
			_, err := conn.Do("GET", "r16lentread:key")
			return err
		},
		"Receive": func(conn redis.Conn) error {
			if err := conn.Send("BLPOP", "r16lentread:list", 0); err != nil {
				return err
			}
			if err := conn.Send("GET", "r16lentread:key"); err != nil {
				return err
			}
			if err := conn.Flush(); err != nil {
				return err
			}
			_, err := conn.Receive()
			return err
		},
	}
	for name, do := range send {
		t.Run(name, func(t *testing.T) {
			servers := redistest.StartNTB(t, 1, redistest.Options{})
			rec, err := startCloseCut(t, ringConfig(servers), servers, "blpop", "the callback", func(c *shard.Client) error {
				return lentDo(c, do)
			})
			require.ErrorIs(t, err, shard.ErrClosed)
			got := rec.snapshot()
			require.Len(t, got.pipelines, 1)
			ev := got.pipelines[0]
			assert.Equal(t, 1, ev.Outcomes[shard.OutcomeUnknown], "BLPOP: %v", ev.Outcomes)
			assert.Equal(t, 1, ev.Outcomes[shard.OutcomeFailed], "GET: %v", ev.Outcomes)
			assert.Equal(t, shard.OutcomeUnknown, ev.Outcome, "the run's first failure is the BLPOP's")
		})
	}
}

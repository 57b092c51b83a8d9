package shard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// lentStep is one call on a lent connection: "do" (Do), "send" (Send),
// "flush" (Flush), "recv" (Receive) or "ctx" (DoContext with a context
// that ends shortly).
type lentStep struct {
	how  string
	args []any
}

func st(how string, args ...any) lentStep { return lentStep{how: how, args: args} }

// TestReview20LentConnLeavesFreshState: whatever sequence a ForEachShard
// function runs on its connection, or a Conn sends (its transactions take
// a connection of their own), the next caller (the pool holds one
// connection) gets one in the state a fresh connection has: no watched
// key (a key changed by another client does not abort its EXEC), no
// transaction, database 0, its name, RESP2, replies on. The sequences
// include the server's refusals that leave a transaction or a watch in
// place (EXEC, DISCARD, UNWATCH with a wrong argument count, a nested
// MULTI, WATCH inside MULTI) and those that end them (EXECABORT, RESET).
func TestReview20LentConnLeavesFreshState(t *testing.T) {
	servers := redistest.StartNTB(t, 1, redistest.Options{})
	srv := servers[0]
	cfg := ringConfig(servers)
	cfg.Pool.ClientName = stateClientName
	cfg.Pool.MaxActive = 1
	cfg.Pool.Wait = true
	cfg.Pool.ReadTimeout = 300 * time.Millisecond
	c := newClient(t, cfg)
	const key = "r20lent"
	cases := map[string][]lentStep{
		"watch multi runtime error exec":  {st("do", "SET", key, "x"), st("do", "WATCH", key), st("do", "MULTI"), st("do", "INCR", key), st("do", "EXEC")},
		"watch multi queue error exec":    {st("do", "WATCH", key), st("do", "MULTI"), st("do", "GET"), st("do", "EXEC")},
		"watch multi queue error":         {st("do", "WATCH", key), st("do", "MULTI"), st("do", "GET")},
		"multi multi exec":                {st("do", "WATCH", key), st("do", "MULTI"), st("do", "MULTI"), st("do", "EXEC")},
		"multi multi":                     {st("do", "WATCH", key), st("do", "MULTI"), st("do", "MULTI")},
		"multi watch exec":                {st("do", "MULTI"), st("do", "WATCH", key), st("do", "EXEC")},
		"multi watch":                     {st("do", "MULTI"), st("do", "WATCH", key)},
		"watch exec":                      {st("do", "WATCH", key), st("do", "EXEC")},
		"watch discard":                   {st("do", "WATCH", key), st("do", "DISCARD")},
		"watch reset":                     {st("do", "WATCH", key), st("do", "RESET")},
		"watch multi unwatch exec":        {st("do", "WATCH", key), st("do", "MULTI"), st("do", "UNWATCH"), st("do", "EXEC")},
		"watch multi unwatch":             {st("do", "WATCH", key), st("do", "MULTI"), st("do", "UNWATCH")},
		"watch multi exec badarity":       {st("do", "WATCH", key), st("do", "MULTI"), st("do", "EXEC", "x")},
		"watch multi discard badarity":    {st("do", "WATCH", key), st("do", "MULTI"), st("do", "DISCARD", "x")},
		"watch unwatch badarity":          {st("do", "WATCH", key), st("do", "UNWATCH", "x")},
		"watch multi badarity":            {st("do", "WATCH", key), st("do", "MULTI", "x")},
		"watch multi badarity exec":       {st("do", "WATCH", key), st("do", "MULTI", "x"), st("do", "EXEC")},
		"piped watch multi exec unread":   {st("send", "WATCH", key), st("send", "MULTI"), st("send", "INCR", key), st("send", "EXEC"), st("flush")},
		"piped watch unflushed":           {st("send", "WATCH", key)},
		"piped multi exec badarity":       {st("send", "WATCH", key), st("send", "MULTI"), st("send", "EXEC", "x"), st("flush")},
		"piped multi exec badarity recv":  {st("send", "WATCH", key), st("send", "MULTI"), st("send", "EXEC", "x"), st("flush"), st("recv"), st("recv"), st("recv")},
		"piped discard badarity recv":     {st("send", "WATCH", key), st("send", "MULTI"), st("send", "DISCARD", "x"), st("flush"), st("recv"), st("recv"), st("recv")},
		"piped unwatch badarity recv":     {st("send", "WATCH", key), st("send", "UNWATCH", "x"), st("flush"), st("recv"), st("recv")},
		"do empty after piped exec badar": {st("send", "WATCH", key), st("send", "MULTI"), st("send", "EXEC", "x"), st("do", "")},
		"tracking":                        {st("do", "CLIENT", "TRACKING", "ON")},
		"select":                          {st("do", "SELECT", 1)},
		"select back":                     {st("do", "SELECT", 1), st("do", "SELECT", 0)},
		"reply off":                       {st("send", "CLIENT", "REPLY", "OFF"), st("flush")},
		"reply skip":                      {st("send", "CLIENT", "REPLY", "SKIP"), st("send", "PING"), st("flush")},
		"reply off on":                    {st("send", "CLIENT", "REPLY", "OFF"), st("send", "CLIENT", "REPLY", "ON"), st("flush"), st("recv")},
		"hello 3":                         {st("send", "HELLO", 3), st("flush")},
		"setname":                         {st("do", "CLIENT", "SETNAME", "other")},
		"readonly":                        {st("do", "READONLY")},
		"blpop cancelled":                 {st("ctx", "BLPOP", key+":list", 0)},
		"watch blpop cancelled":           {st("do", "WATCH", key), st("ctx", "BLPOP", key+":list", 0)},
		"multi in multi via exec in tx":   {st("do", "WATCH", key), st("do", "MULTI"), st("do", "SET", key, "1"), st("do", "MULTI"), st("do", "EXEC")},
		"multi noauth":                    {st("do", "MULTI"), st("do", "AUTH", "nobody", "wrong")},
		"multi auth wrong":                {st("do", "WATCH", key), st("do", "AUTH", "nobody", "wrong")},
	}
	for name, steps := range cases {
		for _, via := range []string{"foreach", "conn"} {
			t.Run(via+"/"+name, func(t *testing.T) {
				run := func(fn func(ctx context.Context, _ shard.Node, conn redis.Conn) error) error {
					if via == "foreach" {
						return c.ForEachShard(context.Background(), fn)
					}
					conn := c.Conn()
					err := fn(context.Background(), shard.Node{}, conn)
					conn.Close()
					return err
				}
				err := run(func(ctx context.Context, _ shard.Node, conn redis.Conn) error {
					for _, s := range steps {
						var err error
						switch s.how {
						case "do":
							cmd := ""
							if len(s.args) > 0 {
								cmd = s.args[0].(string)
							}
							var rest []any
							if len(s.args) > 1 {
								rest = s.args[1:]
							}
							_, err = conn.Do(cmd, rest...)
						case "send":
							err = conn.Send(s.args[0].(string), s.args[1:]...)
						case "flush":
							err = conn.Flush()
						case "recv":
							_, err = conn.Receive()
						case "ctx":
							cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
							_, err = redis.DoContext(conn, cctx, s.args[0].(string), s.args[1:]...)
							cancel()
						}
						var re redis.Error
						if err != nil && !errors.As(err, &re) && s.how != "ctx" && via == "foreach" {
							return fmt.Errorf("%s %v: %w", s.how, s.args, err)
						}
					}
					return nil
				})
				require.NoError(t, err)
				// Another client changes the key: a WATCH left on the
				// connection would abort the next caller's EXEC.
				_, err = srv.Do("SET", key, "changed")
				require.NoError(t, err)
				require.NoError(t, c.ForEachShard(context.Background(), func(ctx context.Context, _ shard.Node, conn redis.Conn) error {
					info, err := redis.String(conn.Do("CLIENT", "INFO"))
					if err != nil {
						return fmt.Errorf("CLIENT INFO: %w", err)
					}
					ci := clientInfo{}
					for _, f := range strings.Fields(info) {
						if k, v, ok := strings.Cut(f, "="); ok {
							ci[k] = v
						}
					}
					if ci["flags"] != "N" || ci["db"] != "0" || ci["multi"] != "-1" || ci["name"] != stateClientName || ci["resp"] != "2" {
						return fmt.Errorf("not fresh: %s", info)
					}
					if err := conn.Send("MULTI"); err != nil {
						return err
					}
					if err := conn.Send("PING"); err != nil {
						return err
					}
					v, err := redis.Values(conn.Do("EXEC"))
					if err != nil {
						return fmt.Errorf("EXEC: %w", err)
					}
					if len(v) != 1 || v[0] != "PONG" {
						return fmt.Errorf("EXEC: %v", v)
					}
					return nil
				}))
			})
		}
	}
}

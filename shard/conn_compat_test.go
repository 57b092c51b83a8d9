package shard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// transcript records what each step of a scenario returned: replies and
// errors, in order, for comparing two connections value by value.
type transcript []any

func (tr *transcript) add(reply any, err error) {
	if err != nil {
		*tr = append(*tr, fmt.Sprintf("error %T: %v", err, err))
		return
	}
	*tr = append(*tr, reply)
}

// compatScenario is one of redigo's documented usage patterns. k makes a
// scenario's key unique to the run: k("u", "foo") is "{<run>u}foo", so
// keys with one tag share a node.
type compatScenario struct {
	name string
	run  func(t *testing.T, c redis.Conn, k func(tag, name string) string, tr *transcript)
}

type album struct {
	Title  string `redis:"title"`
	Rating int    `redis:"rating"`
}

var compatScenarios = []compatScenario{
	{"Do", func(t *testing.T, c redis.Conn, k func(string, string) string, tr *transcript) {
		tr.add(c.Do("SET", k("a", "greeting"), "hello"))
		tr.add(c.Do("GET", k("a", "greeting")))
		tr.add(c.Do("GET", k("a", "missing")))
		tr.add(redis.String(c.Do("GET", k("a", "greeting"))))
		tr.add(c.Do(""))                                 // nothing pending: nil, nil
		tr.add(c.Do("LPUSH", k("b", "list"), "x"))       // int64
		tr.add(c.Do("GET", k("b", "list")))              // WRONGTYPE as a redis.Error
		tr.add(c.Do("INCRBYFLOAT", k("c", "f"), "1.5"))  // bulk
		tr.add(c.Do("SET", k("c", "n"), 1, "NX", "GET")) // nil
	}},
	{"Send/Flush/Receive", func(t *testing.T, c redis.Conn, k func(string, string) string, tr *transcript) {
		// The package doc's pipelining example.
		tr.add(nil, c.Send("SET", k("p", "foo"), "bar"))
		tr.add(nil, c.Send("GET", k("p", "foo")))
		tr.add(nil, c.Flush())
		tr.add(c.Receive()) // reply from SET
		tr.add(c.Receive()) // reply from GET
		// Keys on many nodes.
		for i := 0; i < 20; i++ {
			tr.add(nil, c.Send("INCR", k(fmt.Sprint(i), "n")))
		}
		tr.add(nil, c.Flush())
		for i := 0; i < 20; i++ {
			tr.add(c.Receive())
		}
	}},
	{"Do with pending replies", func(t *testing.T, c redis.Conn, k func(string, string) string, tr *transcript) {
		// Do reads the pending replies and returns its own, with the
		// first error among them.
		tr.add(nil, c.Send("SET", k("d", "a"), 1))
		tr.add(nil, c.Send("INCR", k("e", "a")))
		tr.add(c.Do("INCR", k("d", "a")))
		tr.add(nil, c.Send("SET", k("d", "s"), "x"))
		tr.add(nil, c.Send("INCR", k("d", "s"))) // an error reply
		tr.add(c.Do("GET", k("f", "a")))
		tr.add(nil, c.Send("INCR", k("d", "s")))
		tr.add(c.Do("INCR", k("d", "s"))) // its own reply is an error
	}},
	{`Do("")`, func(t *testing.T, c redis.Conn, k func(string, string) string, tr *transcript) {
		// Do("") returns every pending reply, errors as values.
		tr.add(nil, c.Send("SET", k("g", "a"), "v"))
		tr.add(nil, c.Send("GET", k("h", "a")))
		tr.add(nil, c.Send("GET", k("g", "a")))
		tr.add(nil, c.Send("INCR", k("g", "a")))
		tr.add(c.Do(""))
		// Flushed, partly received: Do("") returns the rest.
		tr.add(nil, c.Send("INCR", k("i", "a")))
		tr.add(nil, c.Send("INCR", k("j", "a")))
		tr.add(nil, c.Send("INCR", k("i", "a")))
		tr.add(nil, c.Flush())
		tr.add(c.Receive())
		tr.add(c.Do(""))
		tr.add(c.Do(""))
	}},
	{"MULTI/EXEC", func(t *testing.T, c redis.Conn, k func(string, string) string, tr *transcript) {
		// The package doc's transaction example.
		tr.add(nil, c.Send("MULTI"))
		tr.add(nil, c.Send("INCR", k("u", "foo")))
		tr.add(nil, c.Send("INCR", k("u", "bar")))
		tr.add(c.Do("EXEC"))
		// One Do at a time.
		tr.add(c.Do("MULTI"))
		tr.add(c.Do("INCR", k("u", "foo")))
		tr.add(c.Do("LPUSH", k("u", "foo"), "x")) // fails inside EXEC
		tr.add(c.Do("GET", k("u", "bar")))
		tr.add(c.Do("EXEC"))
		// DISCARD.
		tr.add(c.Do("MULTI"))
		tr.add(c.Do("INCR", k("u", "foo")))
		tr.add(c.Do("DISCARD"))
		tr.add(c.Do("GET", k("u", "foo")))
		// A command the server refuses to queue aborts EXEC.
		tr.add(nil, c.Send("MULTI"))
		tr.add(nil, c.Send("INCR", k("u", "foo")))
		tr.add(nil, c.Send("SET", k("u", "foo")))
		tr.add(c.Do("EXEC"))
		tr.add(c.Do("GET", k("u", "foo")))
		// Flush and Receive inside a transaction.
		tr.add(nil, c.Send("MULTI"))
		tr.add(nil, c.Send("INCR", k("u", "bar")))
		tr.add(nil, c.Flush())
		tr.add(c.Receive())
		tr.add(c.Receive())
		tr.add(nil, c.Send("INCR", k("u", "bar")))
		tr.add(nil, c.Send("EXEC"))
		tr.add(nil, c.Flush())
		tr.add(c.Receive())
		tr.add(c.Receive())
	}},
	{"WATCH", func(t *testing.T, c redis.Conn, k func(string, string) string, tr *transcript) {
		// The zpop example of redigo's tests and docs.
		z := k("z", "zset")
		tr.add(c.Do("ZADD", z, 1, "a", 2, "b", 3, "c"))
		for i := 0; i < 2; i++ {
			tr.add(c.Do("WATCH", z))
			members, err := redis.Strings(c.Do("ZRANGE", z, 0, 0))
			tr.add(members, err)
			tr.add(nil, c.Send("MULTI"))
			tr.add(nil, c.Send("ZREM", z, members[0]))
			tr.add(c.Do("EXEC"))
		}
		tr.add(c.Do("ZRANGE", z, 0, -1))
		tr.add(c.Do("WATCH", z))
		tr.add(c.Do("UNWATCH"))
		tr.add(c.Do("UNWATCH"))
	}},
	{"Script", func(t *testing.T, c redis.Conn, k func(string, string) string, tr *transcript) {
		set := redis.NewScript(1, `return redis.call("SET", KEYS[1], ARGV[1])`)
		get := redis.NewScript(1, `return redis.call("GET", KEYS[1])`)
		for i := 0; i < 5; i++ {
			key := k(fmt.Sprint("s", i), "v")
			tr.add(set.Do(c, key, i)) // EVALSHA, then EVAL on NOSCRIPT
			tr.add(get.Do(c, key))
			// Loaded on the key's node now: EVALSHA works there.
			tr.add(nil, get.SendHash(c, key))
			tr.add(nil, c.Flush())
			tr.add(c.Receive())
			tr.add(nil, set.Send(c, key, i*10))
			tr.add(c.Do("GET", key))
		}
	}},
	{"Args/ScanStruct", func(t *testing.T, c redis.Conn, k func(string, string) string, tr *transcript) {
		in := album{Title: "Red", Rating: 5}
		key := k("al", "1")
		tr.add(c.Do("HSET", redis.Args{}.Add(key).AddFlat(&in)...))
		values, err := redis.Values(c.Do("HGETALL", key))
		tr.add(values, err)
		var out album
		tr.add(out, redis.ScanStruct(values, &out))
		tr.add(out, nil)
		m, err := redis.StringMap(c.Do("HGETALL", key))
		tr.add(m, err)
		tr.add(redis.Int(c.Do("HGET", key, "rating")))
	}},
	{"Values/Scan/ScanSlice", func(t *testing.T, c redis.Conn, k func(string, string) string, tr *transcript) {
		l := k("l", "albums")
		tr.add(c.Do("RPUSH", l, "Earthbound", 1, "Beat", 4, "Red", 5))
		values, err := redis.Values(c.Do("LRANGE", l, 0, -1))
		tr.add(values, err)
		var albums []album
		tr.add(nil, redis.ScanSlice(values, &albums, "title", "rating"))
		tr.add(fmt.Sprint(albums), nil)
		// MGET over keys that live on different nodes.
		args := redis.Args{}
		for i := 0; i < 10; i++ {
			key := k(fmt.Sprint("m", i), "v")
			tr.add(c.Do("SET", key, i))
			args = args.Add(key)
		}
		args = args.Add(k("m99", "missing"))
		vals, err := redis.Values(c.Do("MGET", args...))
		tr.add(vals, err)
		var first, second int
		_, err = redis.Scan(vals, &first, &second)
		tr.add([]int{first, second}, err)
		tr.add(redis.Ints(c.Do("MGET", args[:10]...)))
		tr.add(c.Do("DEL", args...))
	}},
	{"DoContext/DoWithTimeout/ReceiveContext", func(t *testing.T, c redis.Conn, k func(string, string) string, tr *transcript) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		tr.add(redis.DoContext(c, ctx, "SET", k("x", "a"), "1"))
		tr.add(redis.DoWithTimeout(c, 2*time.Second, "GET", k("x", "a")))
		tr.add(nil, c.Send("INCR", k("x", "a")))
		tr.add(nil, c.Flush())
		tr.add(redis.ReceiveContext(c, ctx))
		tr.add(nil, c.Send("INCR", k("x", "a")))
		tr.add(nil, c.Flush())
		tr.add(redis.ReceiveWithTimeout(c, 2*time.Second))
		// A blocking command cut short by its timeout.
		start := time.Now()
		_, err := redis.DoWithTimeout(c, 200*time.Millisecond, "BLPOP", k("x", "empty"), 0)
		tr.add(err != nil, nil)
		tr.add(time.Since(start) < 2*time.Second, nil)
	}},
	{"keyless", func(t *testing.T, c redis.Conn, k func(string, string) string, tr *transcript) {
		tr.add(c.Do("PING"))
		tr.add(c.Do("PING", "hi"))
		tr.add(c.Do("ECHO", "hello"))
		tr.add(c.Do("SELECT", 0))
		tr.add(redis.String(c.Do("PING")))
	}},
}

// redigo's documented usage patterns give the same results, value by
// value, on a plain redigo connection to one server and on Client.Conn in
// ring mode (3 shards) and cluster mode (3 masters, 3 replicas).
func TestConnCompatibleWithRedigo(t *testing.T) {
	single := redistest.StartTB(t, redistest.Options{})
	modes := connModes(t)
	for ri, sc := range compatScenarios {
		t.Run(sc.name, func(t *testing.T) {
			keys := func(run string) func(tag, name string) string {
				return func(tag, name string) string { return fmt.Sprintf("{cc%d%s%s}%s", ri, run, tag, name) }
			}
			plain, err := redis.Dial("tcp", single.Addr, redis.DialReadTimeout(5*time.Second))
			require.NoError(t, err)
			defer plain.Close()
			var want transcript
			sc.run(t, plain, keys("r"), &want)
			require.NotEmpty(t, want)
			for mi, m := range modes {
				conn := m.c.Conn()
				var got transcript
				sc.run(t, conn, keys(fmt.Sprint(mi)), &got)
				require.NoError(t, conn.Close())
				require.Len(t, got, len(want), m.name)
				for i := range want {
					assert.Equal(t, want[i], got[i], "%s: %s step %d", m.name, sc.name, i)
				}
			}
		})
	}
}

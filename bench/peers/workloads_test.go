package peers

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/shardis/shardis/bench"
	"github.com/shardis/shardis/shard"
)

// rueidisPipelined runs bench.Pipelined's workload through rueidis: SET
// then GET every key, batch commands per DoMulti call, every reply checked
// with bench.CheckReply.
func rueidisPipelined(ctx context.Context, c rueidis.Client, keys []string, value string, batch int) error {
	cmds := make(rueidis.Commands, 0, batch)
	for _, verb := range []string{"SET", "GET"} {
		for start := 0; start < len(keys); start += batch {
			chunk := keys[start:min(start+batch, len(keys))]
			cmds = cmds[:0]
			for _, k := range chunk {
				if verb == "SET" {
					cmds = append(cmds, c.B().Set().Key(k).Value(value).Build())
				} else {
					cmds = append(cmds, c.B().Get().Key(k).Build())
				}
			}
			res := c.DoMulti(ctx, cmds...)
			if len(res) != len(chunk) {
				return fmt.Errorf("%w: %s DoMulti: %d results for %d commands", bench.ErrWorkload, verb, len(res), len(chunk))
			}
			for i, r := range res {
				reply, err := r.ToString()
				if err := bench.CheckReply(verb, reply, err, len(value)); err != nil {
					return fmt.Errorf("%w: key %q: %w", bench.ErrWorkload, chunk[i], err)
				}
			}
		}
	}
	return nil
}

// shardisMGET reads keys with one MGET, which the client splits by slot
// (cluster mode) or by shard (ring mode), and checks every value. The keys
// become the []any that Client.Do takes on every call, as they would in an
// application that holds them as strings.
func shardisMGET(ctx context.Context, c *shard.Client, keys []string, size int) error {
	args := make([]any, len(keys))
	for i, k := range keys {
		args[i] = k
	}
	reply, err := c.Do(ctx, "MGET", args...)
	if err != nil {
		return fmt.Errorf("%w: MGET: %w", bench.ErrWorkload, err)
	}
	values, ok := reply.([]any)
	if !ok || len(values) != len(keys) {
		return fmt.Errorf("%w: MGET: unexpected reply %T of %d keys", bench.ErrWorkload, reply, len(keys))
	}
	for i, v := range values {
		if err := bench.CheckReply("GET", v, nil, size); err != nil {
			return fmt.Errorf("%w: key %q: %w", bench.ErrWorkload, keys[i], err)
		}
	}
	return nil
}

// goRedisMGET reads keys through a go-redis ClusterClient as its users
// must: its MGET refuses keys of different slots, so the keys go as one
// pipeline of GETs (which the client splits per node).
func goRedisMGET(ctx context.Context, c redis.UniversalClient, keys []string, size int) error {
	cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range keys {
			p.Get(ctx, k)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w: GET pipeline: %w", bench.ErrWorkload, err)
	}
	if len(cmds) != len(keys) {
		return fmt.Errorf("%w: GET pipeline: %d results for %d commands", bench.ErrWorkload, len(cmds), len(keys))
	}
	for i, cmd := range cmds {
		sc, ok := cmd.(*redis.StringCmd)
		if !ok {
			return fmt.Errorf("%w: unexpected command type %T", bench.ErrWorkload, cmd)
		}
		reply, err := sc.Result()
		if err := bench.CheckReply("GET", reply, err, size); err != nil {
			return fmt.Errorf("%w: key %q: %w", bench.ErrWorkload, keys[i], err)
		}
	}
	return nil
}

// rueidisMGET reads keys with rueidis's MGet helper, which groups the keys
// by slot into one MGET per slot sent in one DoMulti, and checks every
// value.
func rueidisMGET(ctx context.Context, c rueidis.Client, keys []string, size int) error {
	values, err := rueidis.MGet(c, ctx, keys)
	if err != nil {
		return fmt.Errorf("%w: MGet: %w", bench.ErrWorkload, err)
	}
	if len(values) != len(keys) {
		return fmt.Errorf("%w: MGet: %d values for %d keys", bench.ErrWorkload, len(values), len(keys))
	}
	for _, k := range keys {
		m := values[k]
		v, err := m.ToString()
		if err := bench.CheckReply("GET", v, err, size); err != nil {
			return fmt.Errorf("%w: key %q: %w", bench.ErrWorkload, k, err)
		}
	}
	return nil
}

// single runs one command, SET key to value or GET key, and checks its
// reply with bench.CheckReply.
type single func(ctx context.Context, verb, key, value string) error

func shardisSingle(c *shard.Client) single {
	return func(ctx context.Context, verb, key, value string) error {
		var reply any
		var err error
		if verb == "SET" {
			reply, err = c.Do(ctx, "SET", key, value)
		} else {
			reply, err = c.Do(ctx, "GET", key)
		}
		return bench.CheckReply(verb, reply, err, len(value))
	}
}

func goRedisSingle(c redis.UniversalClient) single {
	return func(ctx context.Context, verb, key, value string) error {
		var reply string
		var err error
		if verb == "SET" {
			reply, err = c.Set(ctx, key, value, 0).Result()
		} else {
			reply, err = c.Get(ctx, key).Result()
		}
		return bench.CheckReply(verb, reply, err, len(value))
	}
}

func rueidisSingle(c rueidis.Client) single {
	return func(ctx context.Context, verb, key, value string) error {
		cmd := c.B().Get().Key(key).Build()
		if verb == "SET" {
			cmd = c.B().Set().Key(key).Value(value).Build()
		}
		reply, err := c.Do(ctx, cmd).ToString()
		return bench.CheckReply(verb, reply, err, len(value))
	}
}

// concurrent runs workers goroutines that each send perWorker single
// commands through do, one at a time, and waits for all of them. Worker w
// owns its share of keys (perWorker/2 of them, rounded up) and
// alternates SET and GET on each key in turn, so half the commands are SETs
// and half GETs, and every GET finds a value. It returns the first error of
// each worker.
func concurrent(ctx context.Context, keys []string, value string, workers, perWorker int, do single) error {
	per := (perWorker + 1) / 2
	if len(keys) < workers*per {
		return fmt.Errorf("%w: %d keys for %d workers of %d keys", bench.ErrWorkload, len(keys), workers, per)
	}
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			own := keys[w*per : (w+1)*per]
			for i := range perWorker {
				verb := "SET"
				if i%2 == 1 {
					verb = "GET"
				}
				k := own[i/2]
				if err := do(ctx, verb, k, value); err != nil {
					errs[w] = fmt.Errorf("%w: key %q: %w", bench.ErrWorkload, k, err)
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

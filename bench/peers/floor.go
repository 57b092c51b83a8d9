package peers

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
)

// ErrFloor is wrapped by every error of a Floor: a command that failed or
// a reply that is not what the workload expects.
var ErrFloor = errors.New("shardis: redigo floor")

// Floor is the thinnest sharding client one can write on redigo: keys go
// to server crc32(key) % N, each server has a redis.Pool of its own, and
// a batch is split per server with every server's Send…Flush…Receive on a
// goroutine of its own. It is the floor that ring mode's overhead is
// measured from: nothing is done that the workload does not need. Unlike
// shardis it has no hash tags, weights, names, retries or health checks.
//
// A Floor is safe for concurrent use.
type Floor struct {
	pools []*redis.Pool
	parts sync.Pool // *floorParts, the per-server split of a batch
}

// floorParts holds, per server, the indexes of a batch's keys.
type floorParts struct{ idx [][]int }

// NewFloor returns a Floor over addrs, in order, with redigo pools of up
// to maxIdle idle connections (0: 8) and read and write timeouts of 10 s.
func NewFloor(addrs []string, maxIdle int) *Floor {
	if maxIdle <= 0 {
		maxIdle = 8
	}
	f := &Floor{}
	for _, a := range addrs {
		f.pools = append(f.pools, &redis.Pool{
			MaxIdle: maxIdle,
			DialContext: func(ctx context.Context) (redis.Conn, error) {
				return redis.DialContext(ctx, "tcp", a,
					redis.DialReadTimeout(10*time.Second), redis.DialWriteTimeout(10*time.Second))
			},
		})
	}
	f.parts.New = func() any { return &floorParts{idx: make([][]int, len(addrs))} }
	return f
}

// Shard returns the index of key's server: crc32(key) % N.
func (f *Floor) Shard(key string) int {
	return int(crc32.ChecksumIEEE([]byte(key)) % uint32(len(f.pools)))
}

// Close closes every pool.
func (f *Floor) Close() error {
	var errs []error
	for _, p := range f.pools {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}

// Set sends SET key value for every key in one batch and checks that
// every reply, converted to a string, is "OK".
func (f *Floor) Set(ctx context.Context, keys []string, value string) error {
	return f.batch(ctx, keys, func(c redis.Conn, k string) error { return c.Send("SET", k, value) },
		func(k string, r any, err error) error {
			s, err := redis.String(r, err)
			if err != nil || s != "OK" {
				return fmt.Errorf("%w: SET %q: %q, %v", ErrFloor, k, s, err)
			}
			return nil
		})
}

// Get sends GET key for every key in one batch and checks that every
// reply, converted to a string, is value.
func (f *Floor) Get(ctx context.Context, keys []string, value string) error {
	return f.batch(ctx, keys, func(c redis.Conn, k string) error { return c.Send("GET", k) },
		func(k string, r any, err error) error {
			s, err := redis.String(r, err)
			if err != nil || s != value {
				return fmt.Errorf("%w: GET %q: %q, %v", ErrFloor, k, s, err)
			}
			return nil
		})
}

// MGet reads keys with one MGET per server (on a goroutine each) and
// checks that every value, converted to a string, is value.
func (f *Floor) MGet(ctx context.Context, keys []string, value string) error {
	fp := f.split(keys)
	defer f.parts.Put(fp)
	errs := make([]error, len(f.pools))
	var wg sync.WaitGroup
	for s, idx := range fp.idx {
		if len(idx) == 0 {
			continue
		}
		wg.Go(func() {
			args := make([]any, len(idx))
			for j, i := range idx {
				args[j] = keys[i]
			}
			errs[s] = f.withConn(ctx, s, func(c redis.Conn) error {
				vals, err := redis.Strings(c.Do("MGET", args...))
				if err != nil {
					return fmt.Errorf("%w: MGET: %w", ErrFloor, err)
				}
				if len(vals) != len(idx) {
					return fmt.Errorf("%w: MGET: %d values for %d keys", ErrFloor, len(vals), len(idx))
				}
				for j, v := range vals {
					if v != value {
						return fmt.Errorf("%w: MGET %q: %q", ErrFloor, keys[idx[j]], v)
					}
				}
				return nil
			})
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// batch splits keys per server and runs, for every server on a goroutine
// of its own, send for each of its keys, one Flush, then check on each
// reply in order.
func (f *Floor) batch(ctx context.Context, keys []string, send func(redis.Conn, string) error,
	check func(key string, r any, err error) error) error {
	fp := f.split(keys)
	defer f.parts.Put(fp)
	errs := make([]error, len(f.pools))
	var wg sync.WaitGroup
	for s, idx := range fp.idx {
		if len(idx) == 0 {
			continue
		}
		wg.Go(func() {
			errs[s] = f.withConn(ctx, s, func(c redis.Conn) error {
				for _, i := range idx {
					if err := send(c, keys[i]); err != nil {
						return fmt.Errorf("%w: send: %w", ErrFloor, err)
					}
				}
				if err := c.Flush(); err != nil {
					return fmt.Errorf("%w: flush: %w", ErrFloor, err)
				}
				var first error
				for _, i := range idx {
					r, err := c.Receive()
					if err := check(keys[i], r, err); err != nil && first == nil {
						first = err
					}
				}
				return first
			})
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// split returns the indexes of keys per server.
func (f *Floor) split(keys []string) *floorParts {
	fp := f.parts.Get().(*floorParts)
	for s := range fp.idx {
		fp.idx[s] = fp.idx[s][:0]
	}
	for i, k := range keys {
		s := f.Shard(k)
		fp.idx[s] = append(fp.idx[s], i)
	}
	return fp
}

// withConn runs fn on a connection of server s's pool and returns it.
func (f *Floor) withConn(ctx context.Context, s int, fn func(redis.Conn) error) error {
	c, err := f.pools[s].GetContext(ctx)
	if err != nil {
		return fmt.Errorf("%w: get connection: %w", ErrFloor, err)
	}
	defer c.Close()
	return fn(c)
}

package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/errtext"
)

// Dialer opens a connection to the node at addr (host:port), ready for
// commands: logged in and over TLS if the cluster needs that.
type Dialer func(ctx context.Context, addr string) (redis.Conn, error)

// SeedError is the failure of Discover on one seed.
type SeedError struct {
	// Seed is the address that was tried.
	Seed string
	// Err is what went wrong: dialing, the command, or the reply.
	Err error
}

// Error names the seed and the failure.
func (e *SeedError) Error() string {
	return "shardis: seed " + e.Seed + ": " + errtext.Nested(e.Err) // a cause of several lines stays under this seed
}

// Unwrap returns Err.
func (e *SeedError) Unwrap() error { return e.Err }

// Discover reads the slot table of a cluster from the first seed that
// gives a usable one. It tries the seeds in order: it dials the seed with
// dial (redis.DialContext over TCP when dial is nil, bounding the connect
// by 5s and each reply by 3s, so that a seed that hangs is skipped; a dial
// of your own sets its own bounds), sends CLUSTER
// SHARDS and parses the reply with ParseShards; when the server refuses
// CLUSTER SHARDS (a server older than 7.0 answers "ERR unknown
// subcommand", or an ACL forbids it), or its reply is ambiguous
// (ErrAmbiguous: a failover under way), it sends CLUSTER SLOTS on the
// same connection and parses that with ParseSlots. A seed that cannot be
// dialed, fails, or gives a malformed or incomplete topology is skipped.
//
// When every seed fails, the error joins one *SeedError per seed tried
// (errors.Is finds ErrMalformed, ErrIncomplete or ErrNotCluster through
// it, and ErrNotCluster is what a server without cluster support gives).
// Discover stops early when ctx ends; the error then includes ctx.Err().
func Discover(ctx context.Context, seeds []string, dial Dialer) (*Table, error) {
	return discover(ctx, seeds, dial, false)
}

// DiscoverTLS is Discover for a client that connects to the cluster over
// TLS: it parses CLUSTER SHARDS with ParseShardsTLS, so that nodes with
// both a plain and a TLS port are dialed on the TLS one. (CLUSTER SLOTS
// already reports the TLS port to a TLS connection.)
func DiscoverTLS(ctx context.Context, seeds []string, dial Dialer) (*Table, error) {
	return discover(ctx, seeds, dial, true)
}

func discover(ctx context.Context, seeds []string, dial Dialer, useTLS bool) (*Table, error) {
	if len(seeds) == 0 {
		return nil, ErrNoSeeds
	}
	if dial == nil {
		dial = dialTCP
	}
	errs := make([]error, 0, len(seeds)+1)
	tried := 0
	for _, seed := range seeds {
		if err := ctx.Err(); err != nil {
			errs = append(errs, fmt.Errorf("shardis: discovery stopped: %w", err))
			break
		}
		tried++
		t, err := discoverOne(ctx, seed, dial, useTLS)
		if err == nil {
			return t, nil
		}
		errs = append(errs, &SeedError{Seed: seed, Err: err})
	}
	return nil, errtext.Errorf("shardis: no seed gave a usable cluster topology (%d of %d tried):\n%w",
		tried, len(seeds), errors.Join(errs...))
}

// The default dialer's bounds: a seed that accepts connections and never
// answers (a frozen host, a partition that drops packets) is skipped after
// them, also when ctx has no deadline, as one that fails is.
const (
	seedDialTimeout = 5 * time.Second
	seedReadTimeout = 3 * time.Second
)

func dialTCP(ctx context.Context, addr string) (redis.Conn, error) {
	return redis.DialContext(ctx, "tcp", addr,
		redis.DialConnectTimeout(seedDialTimeout), redis.DialReadTimeout(seedReadTimeout),
		redis.DialWriteTimeout(seedReadTimeout))
}

// discoverOne reads the table from one seed.
func discoverOne(ctx context.Context, seed string, dial Dialer, useTLS bool) (*Table, error) {
	conn, err := dial(ctx, seed)
	if err != nil {
		if strings.HasPrefix(errtext.Cause(err), "dial ") {
			return nil, err // it says so already ("dial tcp A: ...", a *pool.DialError)
		}
		return nil, errtext.Errorf("dial: %w", err)
	}
	defer conn.Close()
	reply, err := do(ctx, conn, "CLUSTER", "SHARDS")
	var shardsErr error
	if err == nil {
		parse := ParseShards
		if useTLS {
			parse = ParseShardsTLS
		}
		t, err := parse(reply, seed)
		if !errors.Is(err, ErrAmbiguous) {
			return t, err
		}
		// A failover under way: CLUSTER SLOTS names each slot's owner.
		shardsErr = err
	} else {
		var re redis.Error
		if !errors.As(err, &re) {
			return nil, errtext.Errorf("CLUSTER SHARDS: %w", err)
		}
		if notCluster(re) {
			return nil, errtext.Errorf("%w: %w", ErrNotCluster, re)
		}
		shardsErr = re
	}
	reply, err = do(ctx, conn, "CLUSTER", "SLOTS")
	if err != nil {
		var slotsErr redis.Error
		if errors.As(err, &slotsErr) && notCluster(slotsErr) {
			return nil, errtext.Errorf("%w: %w", ErrNotCluster, slotsErr)
		}
		return nil, errtext.Errorf("CLUSTER SHARDS: %v; CLUSTER SLOTS: %w", shardsErr, err)
	}
	return ParseSlots(reply, seed)
}

// notCluster reports whether e is the reply of a server without cluster
// support.
func notCluster(e redis.Error) bool {
	return strings.Contains(string(e), "cluster support disabled")
}

// do runs one command, bounded by ctx even on a connection that does not
// take a context.
func do(ctx context.Context, conn redis.Conn, cmd string, args ...any) (any, error) {
	if c, ok := conn.(redis.ConnWithContext); ok {
		return c.DoContext(ctx, cmd, args...)
	}
	if deadline, ok := ctx.Deadline(); ok {
		if c, ok := conn.(redis.ConnWithTimeout); ok {
			timeout := time.Until(deadline)
			if timeout <= 0 {
				return nil, ctx.Err()
			}
			return c.DoWithTimeout(timeout, cmd, args...)
		}
	}
	return conn.Do(cmd, args...)
}

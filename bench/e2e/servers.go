package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// Target is one client configuration to measure.
type Target struct {
	// Name labels the target in reports: "ring" or "cluster" for the
	// servers Start runs.
	Name string `json:"name"`
	// Config is the client configuration; Run creates one shard.Client
	// from it.
	Config shard.Config `json:"-"`
	// Servers describes what the target talks to, for the report.
	Servers string `json:"servers"`
}

// Servers are the servers Start ran. Close stops them.
type Servers struct {
	// Embedded is true when the servers are in-process miniredis servers
	// because redis-server is not installed.
	Embedded bool
	// Description says, in one sentence, what runs.
	Description string

	targets []Target
	stops   []func() error
}

// Targets returns the ring-mode and the cluster-mode target.
func (s *Servers) Targets() []Target { return append([]Target(nil), s.targets...) }

// Close stops every server. It is idempotent.
func (s *Servers) Close() error {
	var errs []error
	for _, stop := range s.stops {
		errs = append(errs, stop())
	}
	s.stops = nil
	return errors.Join(errs...)
}

// Start runs the servers of a self-contained comparison on 127.0.0.1:
// three redis-server processes for ring mode and a three-master Redis
// Cluster (no replicas) for cluster mode when redis-server and redis-cli are
// installed; otherwise three embedded miniredis servers for ring mode and one
// for cluster mode (miniredis answers the cluster commands as a single node
// owning every slot). Servers.Embedded and Servers.Description say which.
func Start(ctx context.Context) (*Servers, error) {
	if redistest.Available() != nil {
		return startEmbedded()
	}
	s := &Servers{}
	ringServers, err := redistest.StartNContext(ctx, 3, redistest.Options{})
	if err != nil {
		return nil, fmt.Errorf("shardis: start ring servers: %w", err)
	}
	for _, srv := range ringServers {
		s.stops = append(s.stops, srv.Stop)
	}
	cl, err := redistest.StartClusterContext(ctx, 3, 0, redistest.Options{})
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("shardis: start cluster: %w", err)
	}
	s.stops = append(s.stops, cl.Stop)
	version := serverVersion(ringServers[0])
	var shards []ring.Shard
	for i, srv := range ringServers {
		shards = append(shards, ring.Shard{Name: fmt.Sprintf("shard-%d", i+1), Addr: srv.Addr, Weight: 1})
	}
	s.targets = []Target{
		{Name: "ring", Config: ownConfig(shard.Config{Shards: shards}),
			Servers: fmt.Sprintf("3 redis-server %s processes, murmur3 ring", version)},
		{Name: "cluster", Config: ownConfig(shard.Config{Mode: shard.ModeCluster, Seeds: cl.Seeds()}),
			Servers: fmt.Sprintf("Redis Cluster of 3 redis-server %s masters, no replicas", version)},
	}
	s.Description = fmt.Sprintf("real servers: 3 redis-server %s processes (ring mode) and a 3-master Redis Cluster "+
		"(cluster mode), all on 127.0.0.1 on this machine, started by shardis", version)
	return s, nil
}

func startEmbedded() (*Servers, error) {
	s := &Servers{Embedded: true}
	start := func() (*miniredis.Miniredis, error) {
		m := miniredis.NewMiniRedis()
		if err := m.StartAddr("127.0.0.1:0"); err != nil {
			s.Close()
			return nil, fmt.Errorf("shardis: start embedded server: %w", err)
		}
		s.stops = append(s.stops, func() error { m.Close(); return nil })
		return m, nil
	}
	var shards []ring.Shard
	for i := 1; i <= 3; i++ {
		m, err := start()
		if err != nil {
			return nil, err
		}
		shards = append(shards, ring.Shard{Name: fmt.Sprintf("shard-%d", i), Addr: m.Addr(), Weight: 1})
	}
	m, err := start()
	if err != nil {
		return nil, err
	}
	s.targets = []Target{
		{Name: "ring", Config: ownConfig(shard.Config{Shards: shards}),
			Servers: "3 embedded miniredis servers, murmur3 ring"},
		{Name: "cluster", Config: ownConfig(shard.Config{Mode: shard.ModeCluster, Seeds: []string{m.Addr()}}),
			Servers: "1 embedded miniredis server answering as a one-node cluster"},
	}
	s.Description = "EMBEDDED servers, because redis-server is not installed: 3 in-process miniredis servers (ring mode) " +
		"and 1 miniredis server posing as a one-node cluster (cluster mode); the figures say little about real Redis"
	return s, nil
}

// ownConfig sets the timeouts of the servers Start runs: short dials, and
// reads long enough for a 10,000-command pipeline on a busy machine.
func ownConfig(c shard.Config) shard.Config {
	c.Pool = pool.Options{DialTimeout: 2 * time.Second, ReadTimeout: 10 * time.Second, WriteTimeout: 10 * time.Second}
	return c
}

// serverVersion asks a server its version, "" on failure.
func serverVersion(s *redistest.Server) string {
	info, err := s.Do("INFO", "server")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			return v
		}
	}
	return ""
}

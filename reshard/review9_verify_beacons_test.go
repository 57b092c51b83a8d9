package reshard_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview9VerifyShowsNoBeacon: Verify of a migrating config (the
// processes' step-1 config, "shardis verify --config") built a migrating
// client, whose beacons sat on the old nodes for as long as the scan
// lasted, named as a process that still routes by the migration: a
// Finish (or a move's closing finish) run meanwhile refused, or put the
// fence back after deleting it, naming verify as a process still on the
// migration. Verify reads the two placements without migrating.
func TestReview9VerifyShowsNoBeacon(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	from := mustParse(t, ringURL(servers[:1], []string{"s0"}, nil))
	cfg := mustParse(t, ringURL(servers, []string{"s0", "s1"}, nil))
	f := from
	cfg.Migration = &shard.Migration{From: &f}
	cfg.Pool.ReadTimeout = time.Second

	// A node that accepts connections and never answers keeps the scan
	// going for a read timeout or two.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var conns sync.WaitGroup
	defer func() { ln.Close(); conns.Wait() }()
	conns.Go(func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	})

	done := make(chan error, 1)
	go func() {
		_, err := reshard.Verify(ctx, cfg, reshard.VerifyOptions{Nodes: []string{ln.Addr().String()}})
		done <- err
	}()
	var beacons []string
	for finished := false; !finished; {
		select {
		case err := <-done:
			require.Error(t, err, "the silent node cannot be scanned")
			finished = true
		case <-time.After(20 * time.Millisecond):
		}
		list, err := servers[0].Do("CLIENT", "LIST")
		require.NoError(t, err)
		for _, line := range strings.Split(list, "\n") {
			if _, name, ok := strings.Cut(line, " name="); ok && strings.Contains(name, ":migrating:") {
				beacons = append(beacons, strings.Fields(name)[0])
			}
		}
	}
	assert.Empty(t, beacons, "verify showed itself as a process on the migration")
}

package shard_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// slotZeroCluster is a three-master cluster with a client of it that
// records its SlotMap events (periodic refreshes off), a key of slot 0
// set to "v" through the client, slot 0's master (owner) and another
// master (other).
type slotZeroCluster struct {
	rc           *redistest.Cluster
	c            *shard.Client
	key          string
	owner, other *redistest.Server

	mu     sync.Mutex
	events []shard.SlotMapEvent
}

// startSlotZeroCluster sets up a slotZeroCluster; the key is the first of
// prefix:0, prefix:1, ... in slot 0.
func startSlotZeroCluster(t *testing.T, prefix string) *slotZeroCluster {
	t.Helper()
	s := &slotZeroCluster{rc: redistest.StartClusterTB(t, 3, 0, redistest.Options{})}
	cfg := clusterConfig(s.rc.Seeds()...)
	cfg.Cluster.RefreshInterval = -1
	cfg.Hooks = &shard.Hooks{SlotMap: func(ev shard.SlotMapEvent) {
		s.mu.Lock()
		s.events = append(s.events, ev)
		s.mu.Unlock()
	}}
	s.c = newClient(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	for i := 0; s.key == ""; i++ {
		if k := fmt.Sprintf("%s:%d", prefix, i); cluster.Slot(k) == 0 {
			s.key = k
		}
	}
	_, err := s.c.Do(ctx, "SET", s.key, "v")
	require.NoError(t, err)
	owner := slotZeroOwner(t, s.rc.Nodes[0].Addr)
	for _, m := range s.rc.Masters() {
		if m.Addr == owner {
			s.owner = m
		} else if s.other == nil {
			s.other = m
		}
	}
	require.NotNil(t, s.owner, "slot 0's master")
	require.NotNil(t, s.other)
	return s
}

// recorded returns the SlotMap events recorded so far.
func (s *slotZeroCluster) recorded() []shard.SlotMapEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.events)
}

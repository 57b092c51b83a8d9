package shard_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// renamingRouter is a program's Router over fixed addresses whose names
// change when the program says so (its topology was renamed).
type renamingRouter struct {
	addrs  []string
	prefix atomic.Pointer[string]
}

func (r *renamingRouter) Nodes() []shard.Node {
	p := *r.prefix.Load()
	out := make([]shard.Node, len(r.addrs))
	for i, a := range r.addrs {
		out[i] = shard.Node{Name: fmt.Sprintf("%s%d", p, i+1), Addr: a}
	}
	return out
}

// Route places every key on the first node.
func (r *renamingRouter) Route(string) (shard.Node, error) { return r.Nodes()[0], nil }

// nameRecorder keeps what the hooks reported.
type nameRecorder struct {
	mu       sync.Mutex
	commands []shard.Node
	states   []shard.NodeEvent
}

func (r *nameRecorder) hooks() *shard.Hooks {
	return &shard.Hooks{
		Command: func(_ context.Context, ev *shard.CommandEvent) {
			r.mu.Lock()
			r.commands = append(r.commands, ev.Node)
			r.mu.Unlock()
		},
		NodeState: func(ev shard.NodeEvent) {
			r.mu.Lock()
			r.states = append(r.states, ev)
			r.mu.Unlock()
		},
	}
}

func (r *nameRecorder) lastCommand() shard.Node {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.commands[len(r.commands)-1]
}

func (r *nameRecorder) downEvent(addr string) (shard.NodeEvent, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ev := range r.states {
		if ev.Kind == shard.NodeDown && ev.Node.Addr == addr {
			return ev, true
		}
	}
	return shard.NodeEvent{}, false
}

// statsNames maps the address of every node in Stats to its name.
func statsNames(c *shard.Client) map[string]string {
	out := map[string]string{}
	for _, ns := range c.Stats().Nodes {
		out[ns.Node.Addr] = ns.Node.Name
	}
	return out
}

// TestReview8NodeNamesFollowTheTopology: once a client routes by a
// topology that names its servers differently (a finished migration to a
// ring with new shard names, a program's Router that renamed its nodes),
// Stats, NodeState events, NodeError and CommandEvent name the nodes as
// that topology does, as Nodes does, not by the names first seen.
func TestReview8NodeNamesFollowTheTopology(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		// start builds the client with hooks and turns it to the renamed
		// topology; it returns the new names by address and a key
		// that lives on servers[0] afterwards.
		start func(t *testing.T, servers []*redistest.Server, h *shard.Hooks) (*shard.Client, map[string]string, string)
	}{
		{"ring migration", func(t *testing.T, servers []*redistest.Server, h *shard.Hooks) (*shard.Client, map[string]string, string) {
			from, to := ringConfig(servers), ringConfig(servers)
			want := map[string]string{}
			for i, s := range servers {
				from.Shards[i].Name = fmt.Sprintf("old-%d", i+1)
				to.Shards[i].Name = fmt.Sprintf("new-%d", i+1)
				want[s.Addr] = to.Shards[i].Name
			}
			from.Hooks = h
			c := newClient(t, from)
			require.NoError(t, c.StartMigration(ctx, to))
			require.NoError(t, c.ArmMigration()) // alone on the old nodes
			require.NoError(t, c.FinishMigration())
			r, err := ring.New(to.RingConfig())
			require.NoError(t, err)
			for i := 0; ; i++ {
				k := fmt.Sprintf("names:%d", i)
				if r.Shards()[r.Locate(k)].Addr == servers[0].Addr {
					return c, want, k
				}
			}
		}},
		{"router renames its nodes", func(t *testing.T, servers []*redistest.Server, h *shard.Hooks) (*shard.Client, map[string]string, string) {
			rt := &renamingRouter{}
			want := map[string]string{}
			for i, s := range servers {
				rt.addrs = append(rt.addrs, s.Addr)
				want[s.Addr] = fmt.Sprintf("new-%d", i+1)
			}
			old := "old-"
			rt.prefix.Store(&old)
			cfg := ringConfig(servers)
			cfg.Shards, cfg.Router, cfg.Hooks = nil, rt, h
			c := newClient(t, cfg)
			_, err := c.Do(ctx, "SET", "names:before", "v")
			require.NoError(t, err)
			renamed := "new-"
			rt.prefix.Store(&renamed)
			return c, want, "names:after"
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			servers := redistest.StartNTB(t, 3, redistest.Options{})
			rec := &nameRecorder{}
			c, want, key := tc.start(t, servers, rec.hooks())
			for _, n := range c.Nodes() {
				require.Equal(t, want[n.Addr], n.Name, "Nodes names %s as the topology does", n.Addr)
			}
			// Stats follows at the latest at the next health check.
			assert.Eventually(t, func() bool {
				got := statsNames(c)
				for a, n := range want {
					if got[a] != n {
						return false
					}
				}
				return true
			}, 10*time.Second, 20*time.Millisecond, "Stats names the nodes as the topology does")
			assert.Equal(t, want, statsNames(c))

			_, err := c.Do(ctx, "SET", key, "v")
			require.NoError(t, err)
			got := rec.lastCommand()
			assert.Equal(t, shard.Node{Name: want[servers[0].Addr], Addr: servers[0].Addr}, got, "CommandEvent.Node")

			require.NoError(t, servers[0].Stop())
			var down shard.NodeEvent
			require.Eventually(t, func() bool {
				var ok bool
				down, ok = rec.downEvent(servers[0].Addr)
				return ok
			}, 30*time.Second, 20*time.Millisecond, "a NodeDown for the stopped server")
			assert.Equal(t, want[servers[0].Addr], down.Node.Name, "NodeEvent.Node")

			_, err = c.Do(ctx, "GET", key)
			var ne *shard.NodeError
			require.True(t, errors.As(err, &ne), "%v", err)
			assert.Equal(t, want[servers[0].Addr], ne.Node.Name, "NodeError.Node")
			assert.True(t, strings.Contains(err.Error(), "node "+want[servers[0].Addr]+" ("), "the error names the node as the topology does: %v", err)
		})
	}
}

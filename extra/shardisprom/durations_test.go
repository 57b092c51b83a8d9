package shardisprom_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shardis/shardis/extra/shardisprom"
	"github.com/shardis/shardis/shard"
	"github.com/shardis/shardis/shard/command"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// durationSeries gathers the histogram: the sample count of each series,
// by "node operation outcome".
func durationSeries(t *testing.T, d *shardisprom.Durations) map[string]uint64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(d))
	mfs, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]uint64{}
	for _, mf := range mfs {
		if mf.GetName() != "shardis_command_duration_seconds" {
			// shardis_command_errors_total, shardis_node_events_total
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			out[l["node"]+" "+l["operation"]+" "+l["outcome"]] = m.GetHistogram().GetSampleCount()
		}
	}
	return out
}

func commandEvent(addr, name string, o shard.Outcome) *shard.CommandEvent {
	return &shard.CommandEvent{Node: shard.Node{Name: addr, Addr: addr}, Name: name, Outcome: o, Duration: time.Millisecond}
}

// The operation label is a name of the command table in upper case, a
// module-shaped name (shard.MaxModuleOperations), or OTHER: whatever
// names the callers make up, the series stay bounded.
func TestDurationsOperationIsACommandOrOther(t *testing.T) {
	require.Nil(t, command.Lookup(shardisprom.OtherOperation), "OTHER must not be a command's name")
	const node = "10.0.0.1:6379"
	cases := []struct {
		name, want string
	}{
		{"GET", "GET"},
		{"get", "GET"},
		{"hGetAll", "HGETALL"},
		{"object|encoding", "OBJECT|ENCODING"},
		{"CLIENT|SETNAME", "CLIENT|SETNAME"},
		{"NOSUCHCOMMAND", shardisprom.OtherOperation},
		{"gett", shardisprom.OtherOperation},
		{"user:42:get", shardisprom.OtherOperation},
		{"GET ", shardisprom.OtherOperation},
		{"", shardisprom.OtherOperation},
		{"PIPELINE", shardisprom.OtherOperation}, // a caller's name, not a pipeline
		{"FT.SEARCH", "FT.SEARCH"},               // a module's command (shard.MaxModuleOperations)
		{strings.Repeat("get", 100), shardisprom.OtherOperation},
	}
	for _, tc := range cases {
		sub := tc.name
		if len(sub) > 20 {
			sub = sub[:20] + "..."
		}
		t.Run(sub, func(t *testing.T) {
			d := shardisprom.NewDurations(nil, nil)
			d.Hooks().Command(context.Background(), commandEvent(node, tc.name, shard.OutcomeOK))
			assert.Equal(t, map[string]uint64{node + " " + tc.want + " ok": 1}, durationSeries(t, d))
		})
	}

	t.Run("random names", func(t *testing.T) {
		d := shardisprom.NewDurations(nil, nil)
		h := d.Hooks()
		for i := range 1000 {
			h.Command(context.Background(), commandEvent(node, fmt.Sprintf("cmd-%d-%x", i, rand.Uint64()), shard.OutcomeServerError))
			h.Command(context.Background(), commandEvent(node, "set", shard.OutcomeOK))
		}
		assert.Equal(t, map[string]uint64{
			node + " OTHER server_error": 1000,
			node + " SET ok":             1000,
		}, durationSeries(t, d))
	})
}

// Against servers: a name the server refuses is counted as OTHER, and a
// lower-case name under its upper-case one.
func TestDurationsUnknownCommandOnServer(t *testing.T) {
	d := shardisprom.NewDurations(nil, nil)
	c, servers := ringClient(t, 1, d.Hooks())
	ctx := context.Background()
	for i := range 5 {
		_, err := c.DoKey(ctx, "k", fmt.Sprintf("nosuch%d", i), "k")
		require.Error(t, err)
		_, err = c.Do(ctx, "get", "k")
		require.NoError(t, err)
	}
	series := durationSeries(t, d)
	addr := servers[0].Addr
	assert.Equal(t, uint64(5), series[addr+" GET ok"], "%v", series)
	assert.Equal(t, uint64(5), series[addr+" OTHER server_error"], "%v", series)
	assert.Len(t, series, 2, "%v", series)
}

// A node that leaves (shard.NodeRetired) takes its series with it; the
// others keep theirs. A master that is only no longer a master
// (shard.SlotMapEvent.Removed: demoted by a failover, or failed and not
// yet forgotten) keeps them until it is retired.
func TestDurationsDropSeriesOfRemovedMasters(t *testing.T) {
	nodes := []string{"10.0.0.1:7000", "10.0.0.2:7000", "10.0.0.3:7000"}
	cases := []struct {
		name    string
		ev      shard.SlotMapEvent
		retired []string
	}{
		{"nothing removed", shard.SlotMapEvent{
			Moves: []shard.SlotMove{{From: shard.Node{Addr: nodes[0]}, To: shard.Node{Addr: nodes[1]}, Slots: 1}},
			Added: []shard.Node{{Name: "10.0.0.4:7000", Addr: "10.0.0.4:7000"}},
		}, nil},
		{"removed from the masters, not retired", shard.SlotMapEvent{Removed: []shard.Node{{Name: nodes[1], Addr: nodes[1]}}}, nil},
		{"one retired", shard.SlotMapEvent{Removed: []shard.Node{{Name: nodes[1], Addr: nodes[1]}}}, nodes[1:2]},
		{"two retired", shard.SlotMapEvent{Removed: []shard.Node{{Name: nodes[0], Addr: nodes[0]}, {Name: nodes[2], Addr: nodes[2]}}}, []string{nodes[0], nodes[2]}},
		{"unknown node retired", shard.SlotMapEvent{}, []string{"10.0.0.9:7000"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := shardisprom.NewDurations(prometheus.Labels{"client": "test"}, nil)
			h := d.Hooks()
			ctx := context.Background()
			for _, n := range nodes {
				h.Command(ctx, commandEvent(n, "GET", shard.OutcomeOK))
				h.Command(ctx, commandEvent(n, "SET", shard.OutcomeRedirect))
				h.Pipeline(ctx, &shard.PipelineEvent{Node: shard.Node{Name: n, Addr: n}, Commands: 2, Duration: time.Millisecond})
			}
			require.Len(t, durationSeries(t, d), 3*len(nodes))
			if h.SlotMap != nil {
				h.SlotMap(tc.ev)
			}
			for _, n := range tc.retired {
				h.NodeState(shard.NodeEvent{Kind: shard.NodeRetired, Node: shard.Node{Name: n, Addr: n}, AddressLeft: true})
				// The entry of one role retiring (a failover) leaves them.
				h.NodeState(shard.NodeEvent{Kind: shard.NodeRetired, Node: shard.Node{Name: n + " (replica)", Addr: n}})
			}
			for _, n := range nodes {
				if !slices.Contains(tc.retired, n) {
					h.NodeState(shard.NodeEvent{Kind: shard.NodeRetired, Node: shard.Node{Name: n, Addr: n}})
				}
			}

			want := map[string]uint64{}
			for _, n := range nodes {
				if !slices.Contains(tc.retired, n) {
					want[n+" GET ok"] = 1
					want[n+" SET redirect"] = 1
					want[n+" PIPELINE ok"] = 1
				}
			}
			assert.Equal(t, want, durationSeries(t, d))
		})
	}
}

// Recording a command whose series exists allocates nothing, whatever the
// case of its name, and neither does an unknown name.
func TestDurationsCommandHookAllocations(t *testing.T) {
	d := shardisprom.NewDurations(nil, nil)
	h := d.Hooks()
	ctx := context.Background()
	for _, name := range []string{"GET", "get", "no-such-command"} {
		ev := commandEvent("10.0.0.1:6379", name, shard.OutcomeOK)
		h.Command(ctx, ev)
		if n := testing.AllocsPerRun(200, func() { h.Command(ctx, ev) }); n != 0 {
			t.Errorf("%s: %.1f allocations per command, want 0", name, n)
		}
	}
}

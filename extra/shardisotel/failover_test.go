package shardisotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/shardis/shardis/extra/shardisotel"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// A failover shows in the metrics: the dead master's node.up goes to 0,
// and the node events count its going down and its replica's promotion,
// in that order as the NodeState hook saw them.
func TestFailoverMetricsAndCallbacks(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster and kills a master")
	}
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{NodeTimeout: time.Second, Users: []redistest.User{{Name: user, Password: password}}})
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	events := make(chan shard.NodeEvent, 64)
	cfg := shard.Config{
		Mode:   shard.ModeCluster,
		Seeds:  rc.Seeds(),
		Pool:   pool.Options{Username: user, Password: password, DialTimeout: time.Second, ReadTimeout: time.Second},
		Health: shard.HealthOptions{Interval: 100 * time.Millisecond, FailureLimit: 2, Timeout: 300 * time.Millisecond},
		Hooks: &shard.Hooks{NodeState: func(ev shard.NodeEvent) {
			select {
			case events <- ev:
			default:
			}
		}},
	}
	in, err := shardisotel.Instrument(&cfg, shardisotel.WithMeterProvider(mp))
	require.NoError(t, err)
	c, err := shard.New(context.Background(), cfg)
	require.NoError(t, err)
	defer c.Close()
	reg, err := in.Observe(c)
	require.NoError(t, err)
	defer reg.Unregister()

	victim, err := rc.MasterOfSlot(0)
	require.NoError(t, err)
	replica, err := rc.ReplicaOf(victim)
	require.NoError(t, err)
	require.NoError(t, victim.Kill())

	var seen []string
	deadline := time.After(30 * time.Second)
	for promoted := false; !promoted; {
		c.Do(context.Background(), "SET", "{failover}0", "v") //nolint:errcheck // fails until the promotion
		select {
		case ev := <-events:
			seen = append(seen, ev.Kind.String()+" "+ev.Node.Addr)
			promoted = ev.Kind == shard.ReplicaPromoted
		case <-deadline:
			t.Fatalf("no promotion seen; events: %v", seen)
		case <-time.After(50 * time.Millisecond):
		}
	}
	require.NotEmpty(t, seen)
	assert.Equal(t, "down "+victim.Addr, seen[0], "%v", seen)
	assert.Equal(t, "replica_promoted "+replica.Addr, seen[len(seen)-1], "%v", seen)

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	counts := map[string]int64{}
	for _, p := range sumPoints(t, rm, "shardis.client.node.events") {
		a := attrs(p.Attributes.ToSlice())
		counts[a["shardis.node.event"]+" "+a["server.address"]+":"+a["server.port"]] += p.Value
	}
	assert.Positive(t, counts["down "+victim.Addr], "%v", counts)
	assert.Equal(t, int64(1), counts["replica_promoted "+replica.Addr], "%v", counts)
	up := map[string]int64{}
	for _, p := range sumPoints(t, rm, "shardis.client.node.up") {
		a := attrs(p.Attributes.ToSlice())
		if a["shardis.node.read_only"] == "false" {
			up[a["server.address"]+":"+a["server.port"]] = p.Value
		}
	}
	assert.Equal(t, int64(0), up[victim.Addr], "%v", up)
	assert.Equal(t, int64(1), up[replica.Addr], "%v", up)
}

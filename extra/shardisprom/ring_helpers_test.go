package shardisprom_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// ringOver returns a ring-mode config over servers, named prefix-0,
// prefix-1, …, with one-second dial and read timeouts and health.
func ringOver(servers []*redistest.Server, prefix string, health shard.HealthOptions) shard.Config {
	cfg := shard.Config{
		Pool:   pool.Options{DialTimeout: time.Second, ReadTimeout: time.Second},
		Health: health,
	}
	for i, s := range servers {
		cfg.Shards = append(cfg.Shards, ring.Shard{Name: fmt.Sprintf("%s-%d", prefix, i), Addr: s.Addr, Weight: 1})
	}
	return cfg
}

// nodeUpSeries gathers reg and returns the labels (by name) and the value
// of each shardis_node_up series.
func nodeUpSeries(t *testing.T, reg *prometheus.Registry) []nodeUp {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	var out []nodeUp
	for _, mf := range mfs {
		if mf.GetName() != "shardis_node_up" {
			continue
		}
		for _, m := range mf.GetMetric() {
			s := nodeUp{labels: map[string]string{}, value: m.GetGauge().GetValue()}
			for _, l := range m.GetLabel() {
				s.labels[l.GetName()] = l.GetValue()
			}
			out = append(out, s)
		}
	}
	return out
}

// nodeUp is one shardis_node_up series.
type nodeUp struct {
	labels map[string]string
	value  float64
}

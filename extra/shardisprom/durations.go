package shardisprom

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shardis/shardis/shard"
)

// Durations is a histogram of the time each command attempt, or each
// node's part of a pipeline, took on its node:
// shardis_command_duration_seconds{node, operation, outcome}, where
// operation is the command's name in upper case (PIPELINE for a part of a
// pipeline) and outcome is shard.Outcome.String ("ok", "server_error",
// "redirect", "retry", "unknown_outcome", "timeout", "canceled",
// "failed"). Feed it by adding Hooks to shard.Config.Hooks and register it
// like any collector.
//
// The name a caller passes to Do is not trusted as a label: operation is
// shard.CommandEvent.Operation, the name in upper case when the command
// table knows it, the client learned it from the servers, or it is shaped
// like a module's command (FT.SEARCH, JSON.SET; the first
// shard.MaxModuleOperations such names), and OtherOperation for anything
// else (a typo, a name built from data), so the series stay bounded
// whatever the callers send. The series of a node that left every
// topology the client uses are deleted when the client retires it
// (shard.NodeRetired: a master the cluster forgot, the old ring's shards
// once a migration finished, a Sentinel replica no longer listed). A
// master that is only no longer a master (shard.SlotMapEvent.Removed: a
// failover demoted it to a replica, or it failed and the cluster still
// lists it) keeps them, as it keeps its shardis_node_up.
type Durations struct {
	h *prometheus.HistogramVec
}

// OtherOperation is the operation label of a command the client cannot
// vouch for (shard.OtherOperation).
const OtherOperation = shard.OtherOperation

// DefaultBuckets suit Redis round trips: 100µs to 10s.
var DefaultBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// NewDurations returns an empty histogram; nil buckets means
// DefaultBuckets.
func NewDurations(constLabels prometheus.Labels, buckets []float64) *Durations {
	if buckets == nil {
		buckets = DefaultBuckets
	}
	return &Durations{h: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace:   Namespace,
		Name:        "command_duration_seconds",
		Help:        "Time of each command attempt, or each node's part of a pipeline, on its node.",
		Buckets:     buckets,
		ConstLabels: constLabels,
	}, []string{"node", "operation", "outcome"})}
}

// Hooks returns the hooks that feed the histogram and drop the series of
// the nodes that leave (NodeState).
func (d *Durations) Hooks() *shard.Hooks {
	return &shard.Hooks{
		Command: func(_ context.Context, ev *shard.CommandEvent) {
			d.h.WithLabelValues(ev.Node.Addr, ev.Operation(), ev.Outcome.String()).Observe(ev.Duration.Seconds())
		},
		Pipeline: func(_ context.Context, ev *shard.PipelineEvent) {
			d.h.WithLabelValues(ev.Node.Addr, "PIPELINE", ev.Outcome.String()).Observe(ev.Duration.Seconds())
		},
		// A node that left every topology the client uses (the old
		// ring's shards after a migration, a Sentinel replica no longer
		// listed, a master the cluster forgot) has no series. A master
		// that left the slot map's masters (SlotMapEvent.Removed) may
		// still be a replica, demoted by a failover: not a reason.
		NodeState: func(ev shard.NodeEvent) {
			if ev.Kind == shard.NodeRetired {
				d.h.DeletePartialMatch(prometheus.Labels{"node": ev.Node.Addr})
			}
		},
	}
}

// Describe implements prometheus.Collector.
func (d *Durations) Describe(ch chan<- *prometheus.Desc) { d.h.Describe(ch) }

// Collect implements prometheus.Collector.
func (d *Durations) Collect(ch chan<- prometheus.Metric) { d.h.Collect(ch) }

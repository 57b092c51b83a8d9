package shardisprom

import (
	"context"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shardis/shardis/shard"
	"github.com/shardis/shardis/shard/command"
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
// The name a caller passes to Do is not trusted as a label: a name the
// command table does not know (command.Lookup returns nil: a typo, a name
// built from data, a module's command) is labelled OtherOperation, so the
// series stay bounded whatever the callers send. The series of a master
// that left the cluster (shard.SlotMapEvent.Removed) are deleted when the
// client installs the slot map without it.
type Durations struct {
	h *prometheus.HistogramVec
}

// OtherOperation is the operation label of a command whose name the
// command table does not know.
const OtherOperation = "OTHER"

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
// the masters that leave the cluster.
func (d *Durations) Hooks() *shard.Hooks {
	return &shard.Hooks{
		Command: func(_ context.Context, ev *shard.CommandEvent) {
			d.h.WithLabelValues(ev.Node.Addr, operation(ev.Name), ev.Outcome.String()).Observe(ev.Duration.Seconds())
		},
		Pipeline: func(_ context.Context, ev *shard.PipelineEvent) {
			d.h.WithLabelValues(ev.Node.Addr, "PIPELINE", ev.Outcome.String()).Observe(ev.Duration.Seconds())
		},
		SlotMap: func(ev shard.SlotMapEvent) {
			for _, n := range ev.Removed {
				d.h.DeletePartialMatch(prometheus.Labels{"node": n.Addr})
			}
		},
	}
}

// Describe implements prometheus.Collector.
func (d *Durations) Describe(ch chan<- *prometheus.Desc) { d.h.Describe(ch) }

// Collect implements prometheus.Collector.
func (d *Durations) Collect(ch chan<- prometheus.Metric) { d.h.Collect(ch) }

// upperNames holds the upper-case name of each command looked up under
// a name with lower-case letters: at most one entry per command of the
// table.
var upperNames sync.Map // *command.Info -> string

// operation is the operation label of the command the caller named: its
// name in upper case when the command table knows it, OtherOperation
// otherwise. It does not allocate once a command's name was seen.
func operation(name string) string {
	info := command.Lookup(name)
	if info == nil {
		return OtherOperation
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c >= 'a' && c <= 'z' {
			if v, ok := upperNames.Load(info); ok {
				return v.(string)
			}
			v, _ := upperNames.LoadOrStore(info, strings.ToUpper(info.Name))
			return v.(string)
		}
	}
	return name
}

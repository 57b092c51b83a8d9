package shardisprom

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shardis/shardis/shard"
)

// Durations is a histogram of the time each command attempt, or each
// node's part of a pipeline, took on its node:
// shardis_command_duration_seconds{node, operation, outcome}, where
// operation is the command's name in upper case (PIPELINE for a part of a
// pipeline, MULTI for a transaction's MULTI ... EXEC, the caller's
// command, MGET say, for each node's part of a split multi-key command:
// see shard.PipelineEvent.Operation) and outcome is shard.Outcome.String ("ok", "server_error",
// "redirect", "retry", "unknown_outcome", "timeout", "canceled",
// "failed"); a part's outcome is that of its first command that failed,
// a redirect counting only when no other command failed. Feed it by adding Hooks to shard.Config.Hooks and register it
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
// (shard.NodeRetired with AddressLeft: a master the cluster forgot, the
// old ring's shards once a migration finished, a Sentinel replica no
// longer listed; not the entry of the role a cluster server left in a
// failover, as it goes on in its other role). A
// master that is only no longer a master (shard.SlotMapEvent.Removed: a
// failover demoted it to a replica, or it failed and the cluster still
// lists it) keeps them, as it keeps its shardis_node_up.
//
// Its hooks also count the attempts (and the parts of a pipeline) that
// failed: shardis_command_errors_total{node, outcome, cause}, outcome as
// above (but "ok" and "redirect", which are not failures: redirects are
// shardis_node_redirects_total) and cause what failed, from the bounded
// set of shard.ErrorCause: the server's error code when Redis defines it (WRONGTYPE, OOM,
// NOSCRIPT, CLUSTERDOWN, LOADING, READONLY, ...; OtherCause for a code a
// script or a module made up, whose text may hold anything),
// "tx_aborted" for a transaction a watched key aborted, "node_down" for
// a node marked down, "auth" for credentials the server refused (not
// its WRONGPASS), "dial" or "timeout" for a connection that could not be
// opened, "io" or "timeout" for one that failed, "closed"
// for a closed client, else the outcome's name ("timeout" and "canceled"
// for the caller's deadline and cancellation). A pipeline's part counts
// once, by the failure that decided its outcome. Its series go with the
// node's durations.
//
// Its hooks also count the node state changes (Hooks.NodeState):
// shardis_node_events_total{node, event}, event being
// shard.NodeEventKind.String ("down", "up", "ejected", "restored",
// "replica_promoted": a failover shows as the old master's down and its
// replica's replica_promoted), so that a node marked down and up again
// between two scrapes, which shardis_node_up cannot show, is seen. node
// is shard.Node.Addr, as in the other metrics: a Sentinel shard's
// "sentinel/<name>". A retired node's event series are deleted with its
// durations; the retirement itself is not counted.
//
// An attempt that started before its node was retired and ends after it
// (a blocking command, a slow reply) is not observed: it would bring the
// series back for good. An attempt that starts later is, as the node is
// in use again (listed again, or still routed to).
type Durations struct {
	h      *prometheus.HistogramVec
	errs   *prometheus.CounterVec
	events nodeEvents

	mu      sync.Mutex                           // serialises changes of retired
	retired atomic.Pointer[map[string]time.Time] // by address, when the node retired; copied on write
}

// retiredKeep bounds how long a retired address is remembered: an attempt
// that started before the node retired and ends this much later is
// observed.
const retiredKeep = 24 * time.Hour

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
	}, []string{"node", "operation", "outcome"}),
		errs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace:   Namespace,
			Name:        "command_errors_total",
			Help:        "Command attempts, or nodes' parts of a pipeline, that failed on their node, by outcome and cause (the server's error code, dial, io, timeout, node_down, ...).",
			ConstLabels: constLabels,
		}, []string{"node", "outcome", "cause"}),
		events: newNodeEvents(constLabels)}
}

// Hooks returns the hooks that feed the histogram and drop the series of
// the nodes that leave (NodeState).
func (d *Durations) Hooks() *shard.Hooks {
	return &shard.Hooks{
		Command: func(_ context.Context, ev *shard.CommandEvent) {
			if d.late(ev.Node.Addr, ev.Start) {
				return
			}
			d.h.WithLabelValues(ev.Node.Addr, ev.Operation(), ev.Outcome.String()).Observe(ev.Duration.Seconds())
			d.countError(ev.Node.Addr, ev.Outcome, ev.Err)
			d.recheck(ev.Node.Addr, ev.Start)
		},
		Pipeline: func(_ context.Context, ev *shard.PipelineEvent) {
			if d.late(ev.Node.Addr, ev.Start) {
				return
			}
			o := partOutcome(ev)
			d.h.WithLabelValues(ev.Node.Addr, ev.Operation(), o.String()).Observe(ev.Duration.Seconds())
			if o == ev.Outcome {
				d.countError(ev.Node.Addr, o, ev.Err)
			} else {
				// ev.Err is the redirect's: the failure that decided
				// the part's outcome is known by its outcome alone.
				d.countError(ev.Node.Addr, o, nil)
			}
			d.recheck(ev.Node.Addr, ev.Start)
		},
		// A node that left every topology the client uses (the old
		// ring's shards after a migration, a Sentinel replica no longer
		// listed, a master the cluster forgot) has no series. A master
		// that left the slot map's masters (SlotMapEvent.Removed) may
		// still be a replica, demoted by a failover: not a reason.
		NodeState: func(ev shard.NodeEvent) {
			if ev.Kind == shard.NodeRetired && ev.AddressLeft {
				d.retire(ev.Node.Addr, ev.Time)
			}
			d.events.observe(ev)
		},
	}
}

// countError counts a failed attempt (or part) on addr by its cause. A
// redirect, followed, is not a failure: shardis_node_redirects_total
// counts it.
func (d *Durations) countError(addr string, o shard.Outcome, err error) {
	if o == shard.OutcomeOK || o == shard.OutcomeRedirect {
		return
	}
	d.errs.WithLabelValues(addr, o.String(), errorCause(o, err)).Inc()
}

// partOutcome is the outcome of a node's part of a batch: that of its
// first command that did not succeed (ev.Outcome), unless it was a
// redirect (followed, not a failure) and another command failed for
// good: then that failure's.
func partOutcome(ev *shard.PipelineEvent) shard.Outcome {
	if ev.Outcome != shard.OutcomeRedirect {
		return ev.Outcome
	}
	for o, n := range ev.Outcomes {
		if n > 0 && shard.Outcome(o) != shard.OutcomeOK && shard.Outcome(o) != shard.OutcomeRedirect {
			return shard.Outcome(o)
		}
	}
	return ev.Outcome
}

// retire deletes addr's series and remembers when it retired. The mark
// comes first: an attempt observed concurrently either sees it (late,
// recheck) or is observed before the series are deleted.
func (d *Durations) retire(addr string, at time.Time) {
	if at.IsZero() {
		at = time.Now()
	}
	d.mu.Lock()
	m := map[string]time.Time{addr: at}
	if old := d.retired.Load(); old != nil {
		for a, t := range *old {
			if a != addr && at.Sub(t) < retiredKeep {
				m[a] = t
			}
		}
	}
	d.retired.Store(&m)
	d.mu.Unlock()
	d.forget(addr)
}

// late reports whether an attempt on addr that started at start began
// before addr retired. An attempt that started after it means the node
// is in use again: addr is forgotten.
func (d *Durations) late(addr string, start time.Time) bool {
	m := d.retired.Load()
	if m == nil {
		return false // the common case: no node ever retired
	}
	at, ok := (*m)[addr]
	if !ok {
		return false
	}
	if !start.After(at) {
		return true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if cur := d.retired.Load(); cur != nil {
		if t, ok := (*cur)[addr]; ok && t.Equal(at) {
			n := make(map[string]time.Time, len(*cur))
			for a, t := range *cur {
				if a != addr {
					n[a] = t
				}
			}
			d.retired.Store(&n)
		}
	}
	return false
}

// recheck deletes addr's series again when addr retired while an attempt
// that started before was being observed (late said no, and the
// observation may have come after retire deleted the series).
func (d *Durations) recheck(addr string, start time.Time) {
	if m := d.retired.Load(); m != nil {
		if at, ok := (*m)[addr]; ok && !start.After(at) {
			d.forget(addr)
		}
	}
}

// forget deletes addr's durations and errors.
func (d *Durations) forget(addr string) {
	d.h.DeletePartialMatch(prometheus.Labels{"node": addr})
	d.errs.DeletePartialMatch(prometheus.Labels{"node": addr})
}

// Describe implements prometheus.Collector.
func (d *Durations) Describe(ch chan<- *prometheus.Desc) {
	d.h.Describe(ch)
	d.errs.Describe(ch)
	d.events.c.Describe(ch)
}

// Collect implements prometheus.Collector.
func (d *Durations) Collect(ch chan<- prometheus.Metric) {
	d.h.Collect(ch)
	d.errs.Collect(ch)
	d.events.c.Collect(ch)
}

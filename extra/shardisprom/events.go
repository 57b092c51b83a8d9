package shardisprom

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/shardis/shardis/shard"
)

// nodeEvents counts the node state changes the NodeState hook reports:
// shardis_node_events_total{node, event}. shardis_node_up shows a node's
// state when Prometheus scrapes; a node marked down and up again between
// two scrapes, or a failover whose replica is up by the next one, shows
// only here.
type nodeEvents struct {
	c *prometheus.CounterVec
}

func newNodeEvents(constLabels prometheus.Labels) nodeEvents {
	return nodeEvents{c: prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace:   Namespace,
		Name:        "node_events_total",
		Help:        "Node state changes, by event: down, up, ejected, restored, replica_promoted.",
		ConstLabels: constLabels,
	}, []string{"node", "event"})}
}

// observe counts ev; a node whose address the client retired loses its
// series instead (the retirement is not counted: it would stay forever).
func (e nodeEvents) observe(ev shard.NodeEvent) {
	switch {
	case ev.Kind == shard.NodeRetired:
		if ev.AddressLeft {
			e.c.DeletePartialMatch(prometheus.Labels{"node": ev.Node.Addr})
		}
	case ev.Node.Addr != "":
		e.c.WithLabelValues(ev.Node.Addr, ev.Kind.String()).Inc()
	}
}

package shardisprom

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shardis/shardis/shard"
)

// Namespace prefixes every metric name.
const Namespace = "shardis"

// Collector is a prometheus.Collector over a client's Stats: per node its
// state, commands, connection errors, redirects, retries and health-check
// round trip; per pool its connections, waits and dials; and the topology
// refreshes; per Sentinel shard (labels node, "sentinel/<name>", and
// name) the failovers it followed, whether its view of the master is
// stale and how many Sentinels it is subscribed to; during a migration
// its phase and what the client did for it, labelled with the TopologyID of each side (from, to). Every node
// metric has the labels node (host:port; for a Sentinel shard
// "sentinel/<name>", which stays the same through its failovers), name
// (the node's configured name: a ring shard's name in the topology the
// client routes by, the address in cluster mode) and read_only ("true"
// for a replica connection serving reads in cluster mode). A node whose
// label is not its server's address (a Sentinel shard) also has
// shardis_node_server_info{node, name, server} = 1, server being the
// host:port its connections reach now (its master; no series while it
// has none), so that its metrics can be joined to a server's. Values are read when Prometheus
// scrapes, from the nodes of the topologies the client uses then
// (shard.Stats.Nodes): a node that left them (a master or replica the
// cluster forgot, the old ring's shards once a migration finished, a
// Sentinel replica no longer listed) has no series from the moment the
// client retires it.
type Collector struct {
	c *shard.Client

	up, commands, errors, redirects, retries, rtt *prometheus.Desc
	serverInfo                                    *prometheus.Desc
	conns, waits, waitSeconds, dials, dialErrors  *prometheus.Desc
	refreshes                                     *prometheus.Desc
	otherCluster, clusterSwitches                 *prometheus.Desc
	migPhase, migSteps                            *prometheus.Desc
	sentFailovers, sentStale, sentSubscribed      *prometheus.Desc
}

// NewCollector returns a collector over c. constLabels are added to every
// metric (a client name when one process has several clients, say).
func NewCollector(c *shard.Client, constLabels prometheus.Labels) *Collector {
	node := []string{"node", "name", "read_only"}
	pool := []string{"node"}
	d := func(name, help string, labels []string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", name), help, labels, constLabels)
	}
	return &Collector{
		c:           c,
		up:          d("node_up", "1 while the node is usable, 0 while health checks have it marked down.", node),
		commands:    d("node_commands_total", "Commands sent (or failed fast) to the node.", node),
		errors:      d("node_errors_total", "Connection-level failures of the node: dial, I/O, timeout, marked down.", node),
		redirects:   d("node_redirects_total", "MOVED, ASK and TRYAGAIN replies the node sent (cluster mode), by kind.", append(node[:3:3], "kind")),
		retries:     d("node_retries_total", "Commands sent again to the node after a redirect or a retryable failure (cluster mode, Sentinel shards).", node),
		rtt:         d("node_rtt_seconds", "Smoothed health-check round trip of the node.", node),
		serverInfo:  d("node_server_info", "1 for the server (host:port) that a node whose label is not a server address (a Sentinel shard) reaches now.", []string{"node", "name", "server"}),
		conns:       d("pool_connections", "Open connections of the node's pool, by state (idle, used).", append(pool[:1:1], "state")),
		waits:       d("pool_waits_total", "Times a caller waited for a connection because the pool was at MaxActive.", pool),
		waitSeconds: d("pool_wait_seconds_total", "Total time callers waited for a connection.", pool),
		dials:       d("pool_dials_total", "Connections dialed, successfully or not.", pool),
		dialErrors:  d("pool_dial_errors_total", "Dials that failed, refused AUTH included.", pool),
		refreshes:   prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", "topology_refreshes_total"), "Cluster topology refreshes.", nil, constLabels),
		otherCluster: prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", "topology_other_cluster_answers_total"),
			"Cluster topology answers that came from another cluster: refused, or taken by a cluster switch.", nil, constLabels),
		clusterSwitches: prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", "topology_cluster_switches_total"),
			"Refreshes that took another cluster's answer from a seed because no node of the cluster in use answered: the client follows that cluster since.", nil, constLabels),
		sentFailovers: d("sentinel_failovers_total", "Master changes the client followed on a Sentinel shard.", []string{"node", "name"}),
		sentStale: d("sentinel_stale", "1 while the last query of a Sentinel shard's Sentinels failed: the client serves the last master it knew.",
			[]string{"node", "name"}),
		sentSubscribed: d("sentinel_subscribed", "Sentinels a Sentinel shard is subscribed to for +switch-master now.", []string{"node", "name"}),
		migPhase: d("migration_phase", "While the client migrates: 0 routing by the old topology, 1 fenced, 2 armed (moving keys on touch).",
			[]string{"from", "to"}),
		migSteps: d("migration_steps_total", "While the client migrates, by step: move (a MIGRATE that moved keys), overwrite (a blind overwrite, no MIGRATE), old_read (a read answered at the old owner), busy_key (an old copy deleted, the new owner had the key), failure (a move or delete that failed).",
			[]string{"from", "to", "step"}),
	}
}

// Describe implements prometheus.Collector.
func (col *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{col.up, col.commands, col.errors, col.redirects, col.retries, col.rtt, col.serverInfo,
		col.conns, col.waits, col.waitSeconds, col.dials, col.dialErrors, col.refreshes, col.otherCluster, col.clusterSwitches, col.migPhase, col.migSteps,
		col.sentFailovers, col.sentStale, col.sentSubscribed} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (col *Collector) Collect(ch chan<- prometheus.Metric) {
	st := col.c.Stats()
	// A node keeps in Stats the name it had when the client first used
	// it: the topology the client routes by now names it (a migration to
	// a ring that names the same servers differently).
	names := map[string]string{}
	for _, n := range col.c.Nodes() {
		if n.Name != "" {
			names[n.Addr] = n.Name
		}
	}
	pools := map[string]bool{}
	for _, n := range st.Nodes {
		ro := "false"
		name := n.Node.Name
		if n.ReadOnly {
			ro = "true"
		} else if cur, ok := names[n.Node.Addr]; ok {
			name = cur
		}
		l := []string{n.Node.Addr, name, ro}
		up := 1.0
		if n.Down {
			up = 0
		}
		ch <- prometheus.MustNewConstMetric(col.up, prometheus.GaugeValue, up, l...)
		ch <- prometheus.MustNewConstMetric(col.commands, prometheus.CounterValue, float64(n.Commands), l...)
		ch <- prometheus.MustNewConstMetric(col.errors, prometheus.CounterValue, float64(n.Errors), l...)
		ch <- prometheus.MustNewConstMetric(col.redirects, prometheus.CounterValue, float64(n.Moved), append(l, "moved")...)
		ch <- prometheus.MustNewConstMetric(col.redirects, prometheus.CounterValue, float64(n.Ask), append(l, "ask")...)
		ch <- prometheus.MustNewConstMetric(col.redirects, prometheus.CounterValue, float64(n.TryAgain), append(l, "tryagain")...)
		ch <- prometheus.MustNewConstMetric(col.retries, prometheus.CounterValue, float64(n.Retries), l...)
		if n.RTT > 0 {
			ch <- prometheus.MustNewConstMetric(col.rtt, prometheus.GaugeValue, time.Duration(n.RTT).Seconds(), l...)
		}
		if !n.ReadOnly {
			if server, err := col.c.NodeAddr(n.Node); err == nil && server != "" && server != n.Node.Addr {
				ch <- prometheus.MustNewConstMetric(col.serverInfo, prometheus.GaugeValue, 1, n.Node.Addr, name, server)
			}
		}
		// A replica's read-only entry shares its address's pools.
		if pools[n.Node.Addr] {
			continue
		}
		pools[n.Node.Addr] = true
		a := n.Node.Addr
		ch <- prometheus.MustNewConstMetric(col.conns, prometheus.GaugeValue, float64(n.Pool.Idle), a, "idle")
		ch <- prometheus.MustNewConstMetric(col.conns, prometheus.GaugeValue, float64(max(n.Pool.Active-n.Pool.Idle, 0)), a, "used")
		ch <- prometheus.MustNewConstMetric(col.waits, prometheus.CounterValue, float64(n.Pool.WaitCount), a)
		ch <- prometheus.MustNewConstMetric(col.waitSeconds, prometheus.CounterValue, n.Pool.WaitDuration.Seconds(), a)
		ch <- prometheus.MustNewConstMetric(col.dials, prometheus.CounterValue, float64(n.Pool.Dials), a)
		ch <- prometheus.MustNewConstMetric(col.dialErrors, prometheus.CounterValue, float64(n.Pool.DialErrors), a)
	}
	ch <- prometheus.MustNewConstMetric(col.refreshes, prometheus.CounterValue, float64(st.Refreshes))
	ch <- prometheus.MustNewConstMetric(col.otherCluster, prometheus.CounterValue, float64(st.OtherCluster))
	ch <- prometheus.MustNewConstMetric(col.clusterSwitches, prometheus.CounterValue, float64(st.ClusterSwitches))
	col.collectSentinel(ch, st.Sentinel)
	if m, ok := col.c.Migration(); ok {
		ch <- prometheus.MustNewConstMetric(col.migPhase, prometheus.GaugeValue, float64(m.Phase), m.FromID, m.ToID)
		for _, s := range []struct {
			step string
			n    int64
		}{{"move", m.Moves}, {"overwrite", m.Overwrites}, {"old_read", m.OldReads}, {"busy_key", m.BusyKeys}, {"failure", m.Failures}} {
			ch <- prometheus.MustNewConstMetric(col.migSteps, prometheus.CounterValue, float64(s.n), m.FromID, m.ToID, s.step)
		}
	}
}

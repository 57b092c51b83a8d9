package shardisprom

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/shardis/shardis/shard"
)

// SubscriptionCollector is a prometheus.Collector over a Subscription's
// counters (shard.SubscriptionStats), read when Prometheus scrapes:
// shardis_subscription_names{kind} (channel, pattern, shard_channel),
// shardis_subscription_connections, shardis_subscription_buffered, and
// the counters shardis_subscription_received_total, _delivered_total,
// _dropped_total (messages dropped because the buffer was full: alert on
// any), _dials_total, _dial_errors_total, _lost_connections_total,
// _resubscribed_total, _moved_total (shard channels that left a node)
// and _server_errors_total. A process with several subscriptions
// registers a collector for each, told apart by constLabels (a
// subscription name, say): two with the same constLabels cannot both be
// registered. Channel names are never labels.
type SubscriptionCollector struct {
	s *shard.Subscription

	names, conns, buffered                *prometheus.Desc
	received, delivered, dropped          *prometheus.Desc
	dials, dialErrors, lost, resubscribed *prometheus.Desc
	moved, serverErrors                   *prometheus.Desc
}

// NewSubscriptionCollector returns a collector over s. constLabels are
// added to every metric. Unregister it when s is closed.
func NewSubscriptionCollector(s *shard.Subscription, constLabels prometheus.Labels) *SubscriptionCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "subscription", name), help, labels, constLabels)
	}
	return &SubscriptionCollector{
		s:            s,
		names:        d("names", "Names subscribed, by kind (channel, pattern, shard_channel).", "kind"),
		conns:        d("connections", "Connections open now, one per node in use."),
		buffered:     d("buffered", "Messages waiting for the application."),
		received:     d("received_total", "Messages read from the servers."),
		delivered:    d("delivered_total", "Messages handed to the application."),
		dropped:      d("dropped_total", "Messages dropped because the buffer was full."),
		dials:        d("dials_total", "Connections dialed, the first ones included."),
		dialErrors:   d("dial_errors_total", "Dials that failed."),
		lost:         d("lost_connections_total", "Connections lost: closed by the peer, I/O errors, missed health PINGs."),
		resubscribed: d("resubscribed_total", "Names subscribed again after a lost connection, or moved to another node."),
		moved:        d("moved_total", "Shard channels that left a node (MOVED, or a slot migration)."),
		serverErrors: d("server_errors_total", "Error replies in subscribe mode."),
	}
}

// Describe implements prometheus.Collector.
func (sc *SubscriptionCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{sc.names, sc.conns, sc.buffered, sc.received, sc.delivered, sc.dropped,
		sc.dials, sc.dialErrors, sc.lost, sc.resubscribed, sc.moved, sc.serverErrors} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (sc *SubscriptionCollector) Collect(ch chan<- prometheus.Metric) {
	st := sc.s.Stats()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v int64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v))
	}
	gauge(sc.names, float64(st.Channels), "channel")
	gauge(sc.names, float64(st.Patterns), "pattern")
	gauge(sc.names, float64(st.ShardChannels), "shard_channel")
	gauge(sc.conns, float64(st.Connections))
	gauge(sc.buffered, float64(st.Buffered))
	counter(sc.received, st.Received)
	counter(sc.delivered, st.Delivered)
	counter(sc.dropped, st.Dropped)
	counter(sc.dials, st.Dials)
	counter(sc.dialErrors, st.DialErrors)
	counter(sc.lost, st.Lost)
	counter(sc.resubscribed, st.Resubscribed)
	counter(sc.moved, st.Moved)
	counter(sc.serverErrors, st.ServerErrors)
}

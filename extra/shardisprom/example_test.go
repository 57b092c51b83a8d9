package shardisprom_test

import (
	"context"
	"log"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/shardis/shardis/extra/shardisprom"
	"github.com/shardis/shardis/shard"
)

// Export a client's per-node counters, pool statistics and command
// latencies on /metrics.
func Example() {
	ctx := context.Background()
	durations := shardisprom.NewDurations(nil, nil)
	cfg := shard.Config{Mode: shard.ModeCluster, Seeds: []string{"10.0.1.1:7000"}}
	cfg.Hooks = shard.JoinHooks(cfg.Hooks, durations.Hooks())
	client, err := shard.New(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	prometheus.MustRegister(shardisprom.NewCollector(client, prometheus.Labels{"client": "sessions"}), durations)
	http.Handle("/metrics", promhttp.Handler())
	log.Fatal(http.ListenAndServe("127.0.0.1:9121", nil))
}

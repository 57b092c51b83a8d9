package shardisprom_test

import (
	"bufio"
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/shardis/shardis/extra/shardisprom"
	"github.com/shardis/shardis/shard"
)

// Export a client's per-node counters, pool statistics and command
// latencies on /metrics.
func Example() {
	ctx := context.Background()
	addrs := redisAddrs(2) // "host:port" of two redis-servers
	cfg, err := shard.ParseURL("redis-ring://" + strings.Join(addrs, ",") + "?names=a,b")
	if err != nil {
		log.Fatal(err)
	}
	durations := shardisprom.NewDurations(nil, nil)
	cfg.Hooks = shard.JoinHooks(cfg.Hooks, durations.Hooks())
	client, err := shard.New(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	reg := prometheus.NewRegistry() // or prometheus.DefaultRegisterer
	reg.MustRegister(shardisprom.NewCollector(client, prometheus.Labels{"client": "sessions"}), durations)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := httptest.NewServer(mux) // a program runs http.ListenAndServe("127.0.0.1:9121", mux)
	defer srv.Close()

	for _, key := range []string{"user:1", "user:2", "user:3"} {
		if _, err := client.Do(ctx, "SET", key, "Ada"); err != nil {
			log.Fatal(err)
		}
	}
	// What Prometheus scrapes: some of it, each node's address shown as
	// its shard's name.
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	names := strings.NewReplacer(`"`+addrs[0]+`"`, `"a"`, `"`+addrs[1]+`"`, `"b"`)
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := names.Replace(sc.Text())
		for _, metric := range []string{"shardis_node_up{", "shardis_node_commands_total{", "shardis_command_duration_seconds_count{"} {
			if strings.HasPrefix(line, metric) {
				lines = append(lines, line)
			}
		}
	}
	slices.Sort(lines) // series come in address order
	fmt.Println(strings.Join(lines, "\n"))
	// Output:
	// shardis_command_duration_seconds_count{node="a",operation="SET",outcome="ok"} 2
	// shardis_command_duration_seconds_count{node="b",operation="SET",outcome="ok"} 1
	// shardis_node_commands_total{client="sessions",name="a",node="a",read_only="false"} 2
	// shardis_node_commands_total{client="sessions",name="b",node="b",read_only="false"} 1
	// shardis_node_up{client="sessions",name="a",node="a",read_only="false"} 1
	// shardis_node_up{client="sessions",name="b",node="b",read_only="false"} 1
}

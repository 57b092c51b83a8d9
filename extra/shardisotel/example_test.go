package shardisotel_test

import (
	"context"
	"fmt"
	"log"
	"net"

	"github.com/gomodule/redigo/redis"

	"github.com/shardis/shardis/extra/shardisotel"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// Instrument a cluster client: a span per command and pipeline naming the
// node that answered, and metrics per node.
func Example() {
	ctx := context.Background()
	spans := tracetest.NewSpanRecorder() // your exporter: sdktrace.WithBatcher(exporter)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer tp.Shutdown(ctx)
	reader := sdkmetric.NewManualReader() // your reader: sdkmetric.NewPeriodicReader(exporter)
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(ctx)

	cfg := shard.Config{Mode: shard.ModeCluster, Seeds: clusterSeeds(), Pool: pool.Options{Username: user, Password: password}}
	in, err := shardisotel.Instrument(&cfg,
		shardisotel.WithTracerProvider(tp),
		shardisotel.WithMeterProvider(mp),
		shardisotel.WithStatements(256), // off by default
	)
	if err != nil {
		log.Fatal(err)
	}
	client, err := shard.New(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	reg, err := in.Observe(client) // pool and node gauges
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Unregister()
	if _, err := client.Do(ctx, "SET", "user:1000:name", "Ada"); err != nil {
		log.Fatal(err)
	}

	// The span of SET names the node that answered: the master that
	// holds the key.
	for _, s := range spans.Ended() {
		var host, port, statement string
		for _, a := range s.Attributes() {
			switch a.Key {
			case semconv.ServerAddressKey:
				host = a.Value.AsString()
			case semconv.ServerPortKey:
				port = fmt.Sprint(a.Value.AsInt64())
			case semconv.DBQueryTextKey:
				statement = a.Value.AsString()
			}
		}
		node, err := redis.Dial("tcp", net.JoinHostPort(host, port), redis.DialUsername(user), redis.DialPassword(password))
		if err != nil {
			log.Fatal(err)
		}
		name, err := redis.String(node.Do("GET", "user:1000:name")) // MOVED from any other node
		node.Close()
		fmt.Printf("span %s (%s): its node holds the key: %v %v\n", s.Name(), statement, name == "Ada", err)
	}
	// The metrics, per node.
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		log.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch data := m.Data.(type) {
			case metricdata.Histogram[float64]: // db.client.operation.duration, ...
				for _, dp := range data.DataPoints {
					if op, ok := dp.Attributes.Value(semconv.DBOperationNameKey); ok {
						fmt.Println(m.Name, op.AsString(), dp.Count)
					}
				}
			case metricdata.Sum[int64]:
				if m.Name == "shardis.client.commands" { // a data point per node
					var total int64
					for _, dp := range data.DataPoints {
						total += dp.Value
					}
					fmt.Println(m.Name, total)
				}
			}
		}
	}
	// Output:
	// span SET (SET user:1000:name Ada): its node holds the key: true <nil>
	// db.client.operation.duration SET 1
	// shardis.client.commands 1
}

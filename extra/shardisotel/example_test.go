package shardisotel_test

import (
	"context"
	"log"

	"github.com/shardis/shardis/extra/shardisotel"
	"github.com/shardis/shardis/shard"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Instrument a cluster client: a span per command and pipeline naming the
// node that answered, and metrics per node.
func Example() {
	ctx := context.Background()
	tp := sdktrace.NewTracerProvider() // with your exporter
	mp := sdkmetric.NewMeterProvider() // with your reader
	cfg := shard.Config{Mode: shard.ModeCluster, Seeds: []string{"10.0.1.1:7000"}}
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
	_, _ = client.Do(ctx, "SET", "user:1000:name", "Ada")
}

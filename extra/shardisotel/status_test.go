package shardisotel_test

import (
	"context"
	"strings"
	"testing"

	"github.com/shardis/shardis/extra/shardisotel"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestSpanStatusQuotesNoArguments: with statements off no span carries a
// command's arguments, its status included, although the error text can
// quote them (a server that echoes an unknown command's arguments, a
// cross-shard error naming its keys).
func TestSpanStatusQuotesNoArguments(t *testing.T) {
	redistest.Require(t)
	srvs := redistest.StartNTB(t, 2, redistest.Options{Args: []string{"--rename-command", "CONFIG", ""}})
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	cfg := shard.Config{Shards: []ring.Shard{{Addr: srvs[0].Addr, Weight: 1}, {Addr: srvs[1].Addr, Weight: 1}}}
	if _, err := shardisotel.Instrument(&cfg, shardisotel.WithTracerProvider(tp)); err != nil {
		t.Fatal(err)
	}
	c, err := shard.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	const secret = "masterauth-S3cret"
	_, err = c.DoKey(ctx, "any", "CONFIG", "SET", "masterauth", secret)
	t.Logf("CONFIG SET err: %v", err)
	// Two keys on different shards.
	var k1, k2 string
	for i := 0; k2 == ""; i++ {
		k := "user:alice@example.com:" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		if k1 == "" {
			k1 = k
			continue
		}
		if route(t, c, k) != route(t, c, k1) {
			k2 = k
		}
	}
	_, err = c.Do(ctx, "RENAME", k1, k2)
	t.Logf("RENAME err: %v", err)
	var leaks []string
	for _, s := range rec.Ended() {
		d := s.Status().Description
		for _, bad := range []string{secret, "alice@example.com"} {
			if strings.Contains(d, bad) {
				leaks = append(leaks, s.Name()+": "+d)
			}
		}
	}
	if len(leaks) > 0 {
		t.Fatalf("span status leaks arguments with statements off:\n%s", strings.Join(leaks, "\n"))
	}
}

func route(t *testing.T, c *shard.Client, k string) string {
	n, err := c.Router().Route(k)
	if err != nil {
		t.Fatal(err)
	}
	return n.Addr
}

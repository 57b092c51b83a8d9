package shard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// Values that hold the Client, printed with any verb, print a short
// description: never their fields, which fmt reads by reflection while
// the client's goroutines change them (a data race: a Subscription's
// counters, seen with -race in TestValuesHoldingTheClientNeverPrintThePassword)
// and which hold the configuration.
func TestReview7ValuesPrintADescriptionNotTheirFields(t *testing.T) {
	srv := redistest.StartTB(t, redistest.Options{})
	c := newClient(t, ringConfig([]*redistest.Server{srv}))
	ctx := context.Background()
	sub, err := c.Subscribe(ctx, "fmt-fields")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	conn := c.Conn()
	defer conn.Close()
	values := []struct {
		name   string
		v      any
		prefix string
	}{
		{"Client", c, "shard.Client{"},
		{"Pipeline", c.Pipeline(), "shard.Pipeline{"},
		{"Scanner", c.Scan(shard.ScanOptions{}), "shard.Scanner{"},
		{"Subscription", sub, "shard.Subscription{"},
		{"Conn", conn, "shard.Conn{"},
	}
	var txOut []string
	_, err = c.Tx(ctx, []string{"fmt-fields"}, func(tx *shard.Tx) error {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%d", "%x"} {
			txOut = append(txOut, verb+" "+fmt.Sprintf(verb, tx))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(txOut) != 6 {
		t.Fatalf("Tx printed %d times, want 6", len(txOut))
	}
	for _, out := range txOut {
		if !strings.Contains(out, " shard.Tx{") || strings.Contains(out, "&{") || strings.Contains(out, "0x") {
			t.Errorf("Tx printed as %q, want a shard.Tx{...} description", out)
		}
	}
	for _, tc := range values {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%d", "%x", "%X", "%o", "%t"} {
			out := fmt.Sprintf(verb, tc.v)
			if !strings.HasPrefix(out, tc.prefix) || strings.Contains(out, "&{") {
				t.Errorf("%s printed with %s as %q, want a description starting %q", tc.name, verb, out, tc.prefix)
			}
		}
		if got, want := fmt.Sprintf("%T", tc.v), "*shard."; !strings.HasPrefix(got, want) {
			t.Errorf("%s: %%T gave %q", tc.name, got)
		}
	}
}

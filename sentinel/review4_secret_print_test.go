package sentinel_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/sentinel"
)

// The Sentinel password may not show up however a Client or its Options
// are printed. fmt prints a struct's fields itself, bypassing String, for
// %#v of a value and for every verb of a *Client (whose options are an
// unexported field): a debug log of the Client, or of a config struct
// holding Options with %#v, would show the secret.
func TestPrintedClientAndOptionsHideThePassword(t *testing.T) {
	set := redistest.StartSentinelsTB(t, redistest.SentinelOptions{Shards: 1, SentinelPassword: sentinelPassword})
	opts := sentinel.Options{Username: "default", Password: sentinelPassword}
	c, err := sentinel.New("master-0", set.Addrs(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.MasterAddr(context.Background()); err != nil {
		t.Fatal(err)
	}
	type config struct {
		Sentinel  sentinel.Options
		SentinelP *sentinel.Options
		Client    *sentinel.Client
	}
	cases := map[string]any{
		"Options":       opts,
		"*Options":      &opts,
		"*Client":       c,
		"config":        config{Sentinel: opts, SentinelP: &opts, Client: c},
		"[]Options":     []sentinel.Options{opts},
		"map of Client": map[string]*sentinel.Client{"a": c},
	}
	for name, v := range cases {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
			if out := fmt.Sprintf(verb, v); strings.Contains(out, sentinelPassword) {
				t.Errorf("%s printed with %s shows the password: %s", name, verb, out)
			}
		}
	}
	// The text stays useful: the master set, the Sentinels, and that a
	// password is set.
	for _, verb := range []string{"%v", "%#v"} {
		out := fmt.Sprintf(verb, c)
		if !strings.Contains(out, "master-0") || !strings.Contains(out, set.Addrs()[0]) || !strings.Contains(out, "***") {
			t.Errorf("*Client printed with %s = %s, want the master name, the Sentinels and a masked password", verb, out)
		}
	}
}

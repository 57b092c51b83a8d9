package pool

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestPrintedSetAndOptionsHideThePassword: the password may not show up
// however a Set or its Options are printed. fmt prints the fields of a
// struct itself, bypassing String, for %#v of a value and for any verb of
// a *Set (whose options are an unexported field): a debug log of the Set,
// or of a config struct holding Options with %#v, would show the secret.
func TestPrintedSetAndOptionsHideThePassword(t *testing.T) {
	const secret = "pr1nted-s3cret-value"
	opts := Options{Username: "alice", Password: secret, ClientName: "app", DialTimeout: time.Second}
	set := newTestSet(t, opts)
	// A Set with a pool in it: the dial fails (nothing listens), which is
	// beside the point here.
	_, _ = set.Get(context.Background(), closedPort(t))

	type config struct {
		Pool  Options
		PoolP *Options
	}
	cases := map[string]any{
		"Options":        opts,
		"*Options":       &opts,
		"*Set":           set,
		"Options field":  config{Pool: opts, PoolP: &opts},
		"Set.Options()":  set.Options(),
		"[]Options":      []Options{opts},
		"map of Options": map[string]Options{"a": opts},
	}
	for name, v := range cases {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
			out := fmt.Sprintf(verb, v)
			if strings.Contains(out, secret) {
				t.Errorf("%s printed with %s shows the password: %s", name, verb, out)
			}
		}
	}
	// The text stays useful: what the options are, and that a password
	// is set.
	for _, verb := range []string{"%#v", "%v"} {
		for name, v := range map[string]any{"Options": opts, "*Set": set} {
			out := fmt.Sprintf(verb, v)
			if !strings.Contains(out, `Username="alice"`) || !strings.Contains(out, "Password=***") {
				t.Errorf("%s printed with %s = %s, want the username and a masked password", name, verb, out)
			}
		}
	}
}

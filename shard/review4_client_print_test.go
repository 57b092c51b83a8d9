package shard_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
)

// Printing a *Client, with any verb, shows neither the data password nor a
// Sentinel's: fmt printed its unexported fields as they are, the Config
// with the pool's password among them.
func TestPrintedClientHidesThePasswords(t *testing.T) {
	const password = "client-print-secret-9"
	servers := redistest.StartNTB(t, 2, redistest.Options{DefaultPassword: password})
	cfg := ringConfig(servers)
	cfg.Pool.Password = password
	c := newClient(t, cfg)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(verb, c)
		if strings.Contains(out, password) {
			t.Errorf("fmt.Sprintf(%q, client) shows the password: %s", verb, out)
		}
		if !strings.Contains(out, servers[0].Addr) {
			t.Errorf("fmt.Sprintf(%q, client) = %s: it does not say which nodes", verb, out)
		}
	}
}

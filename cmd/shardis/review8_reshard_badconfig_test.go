package main

import (
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
)

// shardis reshard with a --from or --to config that cannot be read,
// parsed or used is a usage error: status 2, as a bad flag is and as
// verify's bad config is, with a message that names the flag and the
// problem, as verify's names --config. It exited 1, the status of a move that failed, for every verb
// of the command (the move, --dry-run, --arm, --finish, --clear-fence).
// A config that loads but that the command finds unusable (one server
// under two addresses) is a usage error too.
func TestReview8ReshardBadConfigIsAUsageError(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	good := writeConfig(t, fmt.Sprintf("shards: [{addr: %q, name: a}, {addr: %q, name: b}]\n", servers[0].Addr, servers[1].Addr))
	bad := []struct {
		name string
		cfg  string
		want string // in the message
	}{
		{"unparseable", writeConfig(t, "shards: [\n"), "yaml"},
		{"an unknown field", writeConfig(t, fmt.Sprintf("shards: [{addr: %q, name: a}]\nbogus_field: 1\n", servers[0].Addr)), "bogus_field"},
		{"a shard without an address", writeConfig(t, "shards: [{name: a}]\n"), "addr"},
		{"a file that does not exist", t.TempDir() + "/missing.yaml", "missing.yaml"},
		{"a URL with an unknown hash", fmt.Sprintf("redis-ring://%s?hash=bogus", servers[0].Addr), "bogus"},
	}
	for _, b := range bad {
		t.Run(b.name+"/verify", func(t *testing.T) {
			code, out, errOut := runCLI(t, "", "verify", "--config", b.cfg)
			if code != 2 {
				t.Fatalf("exit status %d, want 2\nstdout: %s\nstderr: %s", code, out, errOut)
			}
			if !strings.Contains(errOut, "shardis verify: --config: ") || !strings.Contains(strings.ToLower(errOut), b.want) {
				t.Errorf("the message names neither the flag --config nor the problem (%q):\n%s", b.want, errOut)
			}
		})
	}
	verbs := [][]string{nil, {"--dry-run"}, {"--arm"}, {"--finish"}, {"--clear-fence"}}
	// A config that loads but cannot be used: the first server under
	// two addresses, 127.0.0.1 in --from and localhost in --to.
	_, port, err := net.SplitHostPort(servers[0].Addr)
	if err != nil {
		t.Fatal(err)
	}
	alias := writeConfig(t, fmt.Sprintf("shards: [{addr: %q, name: a}, {addr: %q, name: b}]\n", net.JoinHostPort("localhost", port), servers[1].Addr))
	for _, verb := range verbs {
		t.Run("one server under two addresses/"+strings.Join(append([]string{"move"}, verb...), " "), func(t *testing.T) {
			args := append([]string{"reshard", "--from", good, "--to", alias, "--yes", "--quiet"}, verb...)
			code, out, errOut := runCLI(t, "", args...)
			if code != 2 {
				t.Fatalf("exit status %d, want 2\nstdout: %s\nstderr: %s", code, out, errOut)
			}
			if !strings.Contains(errOut, "one server") {
				t.Errorf("the message does not name the problem:\n%s", errOut)
			}
		})
	}
	for _, b := range bad {
		for _, side := range []string{"--from", "--to"} {
			for _, verb := range verbs {
				name := fmt.Sprintf("%s/%s/%s", b.name, side, strings.Join(append([]string{"move"}, verb...), " "))
				t.Run(name, func(t *testing.T) {
					from, to := good, good
					if side == "--from" {
						from = b.cfg
					} else {
						to = b.cfg
					}
					args := append([]string{"reshard", "--from", from, "--to", to, "--yes", "--quiet"}, verb...)
					code, out, errOut := runCLI(t, "", args...)
					if code != 2 {
						t.Fatalf("exit status %d, want 2\nstdout: %s\nstderr: %s", code, out, errOut)
					}
					if !strings.Contains(errOut, side) || !strings.Contains(strings.ToLower(errOut), b.want) {
						t.Errorf("the message names neither the flag %s nor the problem (%q):\n%s", side, b.want, errOut)
					}
				})
			}
		}
	}
}

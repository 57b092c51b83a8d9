package main

import (
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
)

// shardis stats is scripted as a check: when probe commands fail (a shard
// down here), it still prints the counters but exits 1 and says how many
// failed; when all succeed it exits 0.
func TestStatsExitsNonZeroWhenTheProbeFails(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	cfg := writeConfig(t, "shards: [{addr: \""+servers[0].Addr+"\"}, {addr: \""+servers[1].Addr+"\"}]\nhealth: {interval: -1ns}\n")

	code, out, errOut := runCLI(t, "", "stats", "--config", cfg, "--ops", "50")
	if code != 0 {
		t.Fatalf("all shards up: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "probe: 100 commands") || !strings.Contains(out, ", 0 failed") {
		t.Fatalf("all shards up: output lacks the probe line:\n%s", out)
	}

	if err := servers[1].Stop(); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, "", "stats", "--config", cfg, "--ops", "50")
	if code != 1 {
		t.Fatalf("a shard down: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "NODE") {
		t.Errorf("a shard down: the counters were not printed:\n%s", out)
	}
	if !strings.Contains(errOut, "failed") || !strings.Contains(errOut, servers[1].Addr) {
		t.Errorf("a shard down: stderr does not say what failed:\n%s", errOut)
	}
}

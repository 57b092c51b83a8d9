package main

import (
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
)

// The stats help says it exits 1 when a probe command failed, and the
// table form does; --json and --watch exited 0 with failed commands in
// the very report they printed, so a script checking with --json saw a
// healthy client.
func TestReview6StatsJSONAndWatchExitNonZeroWhenTheProbeFails(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	cfg := writeConfig(t, "shards: [{addr: \""+servers[0].Addr+"\"}, {addr: \""+servers[1].Addr+"\"}]\nhealth: {interval: -1ns}\n")
	modes := [][]string{
		{"--json"},
		{"--watch", "--interval", "10ms", "--count", "2"},
		{"--watch", "--json", "--interval", "10ms", "--count", "2"},
	}
	for _, m := range modes {
		args := append([]string{"stats", "--config", cfg, "--ops", "50"}, m...)
		code, out, errOut := runCLI(t, "", args...)
		if code != 0 {
			t.Fatalf("%v, all shards up: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", m, code, out, errOut)
		}
	}

	if err := servers[1].Stop(); err != nil {
		t.Fatal(err)
	}
	for _, m := range modes {
		args := append([]string{"stats", "--config", cfg, "--ops", "50"}, m...)
		code, out, errOut := runCLI(t, "", args...)
		if code != 1 {
			t.Errorf("%v, a shard down: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", m, code, out, errOut)
			continue
		}
		if !strings.Contains(out, "failed") {
			t.Errorf("%v, a shard down: the report was not printed:\n%s", m, out)
		}
		if !strings.Contains(errOut, "failed") || !strings.Contains(errOut, servers[1].Addr) {
			t.Errorf("%v, a shard down: stderr does not say what failed:\n%s", m, errOut)
		}
	}
}

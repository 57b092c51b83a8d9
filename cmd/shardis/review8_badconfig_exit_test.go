package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReview8BadConfigIsAUsageErrorEverywhere: reshard and verify exit 2
// for a --config that cannot be read, parsed or used (a usage error, as
// a bad flag), but nodes, stats, locate, subscribe and demo exited 1, the
// status of a command that failed at its work: a script could not tell a
// typo in its config from a cluster that is down.
func TestReview8BadConfigIsAUsageErrorEverywhere(t *testing.T) {
	dir := t.TempDir()
	unknownField := filepath.Join(dir, "unknown.yaml")
	if err := os.WriteFile(unknownField, []byte("shards: [{addr: '127.0.0.1:1'}]\nbogus_field: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	noAddr := filepath.Join(dir, "noaddr.yaml")
	if err := os.WriteFile(noAddr, []byte("shards: [{name: a, weight: 1}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sameServer := filepath.Join(dir, "same.yaml")
	if err := os.WriteFile(sameServer, []byte("shards: [{addr: 'localhost:7431'}, {addr: '127.0.0.1:7431'}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.yaml")
	configs := map[string]string{"an unknown field": unknownField, "a shard without an address": noAddr,
		"one server twice": sameServer, "a file that does not exist": missing}
	commands := [][]string{
		{"nodes"},
		{"stats"},
		{"locate", "k"},
		{"subscribe", "ch"},
		{"demo"},
	}
	for _, cmd := range commands {
		for what, path := range configs {
			t.Run(cmd[0]+" "+what, func(t *testing.T) {
				args := append([]string{cmd[0], "--config", path}, cmd[1:]...)
				code, out, errOut := runCLI(t, "", args...)
				if code != 2 {
					t.Fatalf("exit status %d, want 2\nstdout: %s\nstderr: %s", code, out, errOut)
				}
				if !strings.Contains(errOut, "bad config") {
					t.Fatalf("stderr does not say the config is bad: %s", errOut)
				}
			})
		}
	}
}

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
)

// shardis verify exits 1 only when keys are misplaced: a script reads
// status 1 as "run the mover again". A --config that cannot be read or
// parsed is a usage error (status 2, as the command's help says), not a
// finding; it exited 1.
func TestReview5VerifyBadConfigIsAUsageError(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	if _, err := servers[1].Do("SET", "stray", "1"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	badYAML := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(badYAML, []byte("mode: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	unreadable := filepath.Join(dir, "missing.yaml")
	good := fmt.Sprintf("redis-ring://%s?names=a", servers[0].Addr)

	cases := []struct {
		name string
		args []string
		code int
	}{
		{"a misplaced key", []string{"--config", good, "--nodes", servers[1].Addr}, 1},
		{"a file that does not exist", []string{"--config", unreadable}, 2},
		{"invalid YAML", []string{"--config", badYAML}, 2},
		{"a URL with an unknown hash", []string{"--config", good + "&hash=bogus"}, 2},
		{"a cluster URL with a database", []string{"--config", "redis-cluster://" + servers[0].Addr + "?db=3"}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", append([]string{"verify"}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit status %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errOut)
			}
		})
	}
}

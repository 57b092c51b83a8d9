package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestHelpAndStrayWords: -h on every command prints its usage and exits
// 0; a word after the flags of a command that takes none exits 2 and
// names the word, before anything is dialled or started (the flags after
// it would otherwise be dropped without a word).
func TestHelpAndStrayWords(t *testing.T) {
	verbs := [][]string{{"bench", "e2e"}, {"bench", "placement"}, {"demo"}, {"locate"}, {"nodes"},
		{"reshard"}, {"slot"}, {"stats"}, {"subscribe"}, {"verify"}}
	if len(verbs)-1 != len(commands) { // bench counts once
		t.Fatalf("%d commands registered, the table lists %d: add the new one", len(commands), len(verbs)-1)
	}
	for _, v := range verbs {
		code, out, _ := runCLI(t, "", append(v, "-h")...)
		assert.Equal(t, 0, code, "%s -h", strings.Join(v, " "))
		assert.Contains(t, out, "-", "%s -h prints the flags", strings.Join(v, " "))
	}
	for _, args := range [][]string{
		{"bench", "e2e", "--duration", "1s", "now"},
		{"bench", "placement", "now"},
		{"demo", "--keys", "10", "now"},
		{"nodes", "--config", "nosuchfile.yaml", "now"},
		{"stats", "--config", "nosuchfile.yaml", "now"},
		{"verify", "--config", "redis-ring://127.0.0.1:1", "now"},
		{"reshard", "--from", "redis-ring://127.0.0.1:1", "--to", "redis-ring://127.0.0.1:2", "now", "--dry-run"},
	} {
		code, _, errOut := runCLI(t, "", args...)
		assert.Equal(t, 2, code, strings.Join(args, " "))
		assert.Contains(t, errOut, `unexpected argument "now"`, strings.Join(args, " "))
	}
}

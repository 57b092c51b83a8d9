package main

import (
	"strings"
	"testing"
)

// stats checked --interval and --count only after connecting: with the
// cluster down, "--watch --interval 0" exited 1 (the servers) instead of
// 2 (the command line).
func TestReview13StatsFlagsCheckedBeforeConnecting(t *testing.T) {
	cfg := writeConfig(t, "mode: cluster\nseeds: [\"127.0.0.1:1\"]\n")
	for _, args := range [][]string{{"--watch", "--interval", "0s"}, {"--watch", "--count", "-1"}} {
		code, _, errOut := runCLI(t, "", append([]string{"stats", "--config", cfg}, args...)...)
		if code != 2 || !strings.Contains(errOut, args[1]) {
			t.Errorf("%v: exit %d, want 2 naming %s\nstderr: %s", args, code, args[1], errOut)
		}
	}
}

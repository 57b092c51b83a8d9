package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
)

// Flags that only mean something with another one were accepted and
// dropped without a word: stats --count 5 printed the counters once and
// exited 0, --interval without --watch did nothing, --no-probe silently
// overrode an explicit --ops 100, and bench placement --keys FILE ignored
// --pattern. Each is a usage error (exit 2) naming the flag now.
func TestReview6FlagsThatWouldBeIgnoredAreUsageErrors(t *testing.T) {
	srv := redistest.StartTB(t, redistest.Options{})
	cfg := writeConfig(t, "shards: [{addr: \""+srv.Addr+"\"}]\n")
	keys := filepath.Join(t.TempDir(), "keys.txt")
	if err := os.WriteFile(keys, []byte("a\nb\nc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"stats", "--config", cfg, "--count", "5"}, "--count"},
		{[]string{"stats", "--config", cfg, "--json", "--count", "5"}, "--count"},
		{[]string{"stats", "--config", cfg, "--interval", "10ms"}, "--interval"},
		{[]string{"stats", "--config", cfg, "--no-probe", "--ops", "100"}, "--ops"},
		{[]string{"stats", "--config", cfg, "--no-probe", "--prefix", "x:"}, "--prefix"},
		{[]string{"stats", "--config", cfg, "--ops", "0", "--prefix", "x:"}, "--prefix"},
		{[]string{"bench", "placement", "--keys", keys, "--pattern", "u:{id}", "--lookup-time", "1ms"}, "--pattern"},
	} {
		code, out, errOut := benchCLI(context.Background(), "", c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, want 2 naming %s\nstdout:\n%s\nstderr:\n%s", c.args, code, c.want, out, errOut)
		}
	}
	// The combinations that mean something still run.
	for _, args := range [][]string{
		{"stats", "--config", cfg, "--no-probe"},
		{"stats", "--config", cfg, "--ops", "0"},
		{"stats", "--config", cfg, "--watch", "--interval", "10ms", "--count", "2", "--ops", "5", "--prefix", "x:"},
	} {
		code, out, errOut := benchCLI(context.Background(), "", args...)
		if code != 0 {
			t.Errorf("%v: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", args, code, out, errOut)
		}
	}
}

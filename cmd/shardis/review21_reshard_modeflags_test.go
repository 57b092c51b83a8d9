package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
)

// --arm, --finish and --clear-fence took the move's flags and dropped
// them without a word: "--finish --allow-unnamed" finished as if it had
// not been given (an operator who meant it to pass unnamed connections
// was not told), "--arm --rate 5 --dump" armed and exited 0. As stats'
// --count without --watch, each is a usage error (exit 2) naming the
// flag, and nothing is changed on the servers.
func TestReview21ReshardModeRefusesFlagsItIgnores(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	from := fmt.Sprintf("redis-ring://%s?names=a", servers[0].Addr)
	to := fmt.Sprintf("redis-ring://%s,%s?names=a,b", servers[0].Addr, servers[1].Addr)
	for _, c := range []struct {
		mode string
		flag []string
	}{
		{"--arm", []string{"--rate", "5"}},
		{"--arm", []string{"--dump"}},
		{"--arm", []string{"--batch", "3"}},
		{"--arm", []string{"--max-block", "5ms"}},
		{"--arm", []string{"--timeout", "30s"}},
		{"--finish", []string{"--allow-unnamed"}},
		{"--finish", []string{"--skip-probe"}},
		{"--finish", []string{"--rate", "20MB/s"}},
		{"--clear-fence", []string{"--allow-unnamed"}},
		{"--clear-fence", []string{"--dump"}},
	} {
		args := append([]string{"reshard", "--from", from, "--to", to, "--quiet", c.mode}, c.flag...)
		code, out, errOut := runCLI(t, "", args...)
		if code != 2 {
			t.Errorf("%s %s: exit %d, want 2\nstdout: %s\nstderr: %s", c.mode, c.flag[0], code, out, errOut)
			continue
		}
		if !strings.Contains(errOut, c.flag[0]) || !strings.Contains(errOut, c.mode) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%s %s: want one line naming both flags:\n%s", c.mode, c.flag[0], errOut)
		}
		if out != "" {
			t.Errorf("%s %s: stdout %q, want nothing done", c.mode, c.flag[0], out)
		}
	}
	if a, b := dbsize(t, servers[0]), dbsize(t, servers[1]); a != 0 || b != 0 {
		t.Errorf("%d keys on a, %d on b after refused commands; want none (no fence marker)", a, b)
	}
	// The flags each mode uses are still taken.
	if code, out, errOut := runCLI(t, "", "reshard", "--from", from, "--to", to, "--arm", "--allow-unnamed", "--skip-probe", "--yes"); code != 0 {
		t.Fatalf("--arm --allow-unnamed --skip-probe: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if code, out, errOut := runCLI(t, "", "reshard", "--from", from, "--to", to, "--clear-fence", "--yes", "--quiet"); code != 0 {
		t.Fatalf("--clear-fence --yes --quiet: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}

package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
)

// A batch of large values that outlasts the mover's Timeout (10 s by
// default: each MIGRATE's I/O between the servers, and the pause of the
// DUMP/RESTORE path) fails with advice to raise Timeout, which the CLI
// gave no way to do: such values could not be moved with shardis reshard.
// --timeout sets it.
func TestReview5ReshardTimeoutFlag(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	from := fmt.Sprintf("redis-ring://%s?names=a", servers[0].Addr)
	to := fmt.Sprintf("redis-ring://%s?names=b", servers[1].Addr)
	for i := 0; i < 20; i++ {
		if _, err := servers[0].Do("SET", fmt.Sprintf("k%d", i), strings.Repeat("v", 1000)); err != nil {
			t.Fatal(err)
		}
	}
	for _, bad := range []string{"-1s", "soon"} {
		code, _, errOut := runCLI(t, "", "reshard", "--from", from, "--to", to, "--timeout", bad)
		if code != 2 || !strings.Contains(errOut, "--timeout") {
			t.Fatalf("--timeout %s: exit %d, want 2 naming --timeout; stderr: %s", bad, code, errOut)
		}
	}
	for _, dump := range []bool{false, true} {
		args := []string{"reshard", "--from", from, "--to", to, "--yes", "--allow-unnamed", "--quiet", "--timeout", "30s"}
		if dump {
			args = append(args, "--dump")
		}
		code, out, errOut := runCLI(t, "", args...)
		if code != 0 || !strings.Contains(out, "0 misplaced") {
			t.Fatalf("dump %v: exit %d, want 0 and a clean verify\nstdout: %s\nstderr: %s", dump, code, out, errOut)
		}
		// Back, for the next run.
		from, to = to, from
	}
	n, err := servers[0].Do("DBSIZE")
	if err != nil || n != "20" {
		t.Fatalf("DBSIZE of the first server after moving there and back: %q, %v; want 20", n, err)
	}
}

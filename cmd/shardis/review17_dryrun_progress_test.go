package main

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
)

// review17DBSize returns the DBSIZE of s.
func review17DBSize(t *testing.T, s *redistest.Server) int {
	t.Helper()
	v, err := s.Do("DBSIZE")
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		t.Fatalf("DBSIZE %q: %v", v, err)
	}
	return n
}

// The progress line of a dry run said "982 moved (...)" while nothing
// moved: an operator reading the log of a dry run (or a colleague's
// terminal) read that keys had moved.
func TestReview17DryRunProgressSaysNothingMoved(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	const keys = 200
	for i := 0; i < keys; i++ {
		if _, err := servers[0].Do("SET", fmt.Sprintf("k%d", i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	from := fmt.Sprintf("redis-ring://%s?names=a", servers[0].Addr)
	to := fmt.Sprintf("redis-ring://%s,%s?names=a,b", servers[0].Addr, servers[1].Addr)
	code, out, errOut := runCLI(t, "", "reshard", "--from", from, "--to", to, "--dry-run", "--rate", "10")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if a, b := review17DBSize(t, servers[0]), review17DBSize(t, servers[1]); a != keys || b != 0 {
		t.Errorf("after a dry run: %d keys on a, %d on b; want %d and 0", a, b, keys)
	}
	if !strings.Contains(out, "would move") {
		t.Errorf("the report does not say what would move:\n%s", out)
	}
	if !strings.Contains(errOut, "reshard: ") {
		t.Fatalf("no progress line:\n%s", errOut)
	}
	if strings.Contains(errOut, " moved") {
		t.Errorf("the progress of a dry run says that keys moved:\n%s", errOut)
	}
	if !strings.Contains(errOut, "would move") {
		t.Errorf("the progress of a dry run does not say what would move:\n%s", errOut)
	}
}

package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
)

// --rate given an empty value ("--rate \"$RATE\"", "--rate \"${RATE}/s\""
// with RATE unset in the script or the unit file) was taken for no
// --rate at all: the move ran at full speed, the pace the operator had
// asked for dropped without a word. A --rate given is now a pace, or a
// usage error that moves nothing.
func TestReview17EmptyRateIsAUsageError(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	const keys = 100
	for i := 0; i < keys; i++ {
		if _, err := servers[0].Do("SET", fmt.Sprintf("k%d", i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	from := fmt.Sprintf("redis-ring://%s?names=a", servers[0].Addr)
	to := fmt.Sprintf("redis-ring://%s,%s?names=a,b", servers[0].Addr, servers[1].Addr)
	for _, rate := range []string{"", "/s", " ", " /s"} {
		t.Run(fmt.Sprintf("%q", rate), func(t *testing.T) {
			code, out, errOut := runCLI(t, "", "reshard", "--from", from, "--to", to, "--allow-unnamed", "--quiet", "--rate", rate)
			if code != 2 || !strings.Contains(errOut, "--rate") {
				t.Errorf("exit %d, want 2 and a word on --rate\nstdout: %s\nstderr: %s", code, out, errOut)
			}
			if a, b := review17DBSize(t, servers[0]), review17DBSize(t, servers[1]); a != keys || b != 0 {
				t.Fatalf("%d keys on a, %d on b; want %d and 0: the move ran", a, b, keys)
			}
		})
	}
	// Without --rate the move runs unpaced, as before.
	code, out, errOut := runCLI(t, "", "reshard", "--from", from, "--to", to, "--allow-unnamed", "--quiet")
	if code != 0 || !strings.Contains(out, "0 misplaced") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}

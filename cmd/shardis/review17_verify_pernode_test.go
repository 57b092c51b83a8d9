package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
)

// With --samples 0 (the counts alone, as a script or a large scan asks),
// verify said how many keys were misplaced but not where: the operator
// had to run it again with samples to learn which node to look at.
// VerifyReport.PerNode had the counts by node all along.
func TestReview17VerifyNamesTheNodesOfMisplacedKeys(t *testing.T) {
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	// A topology of a alone: every key on b or c is misplaced.
	const onB, onC = 7, 3
	for i := 0; i < onB; i++ {
		if _, err := servers[1].Do("SET", fmt.Sprintf("b%d", i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < onC; i++ {
		if _, err := servers[2].Do("SET", fmt.Sprintf("c%d", i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := servers[0].Do("SET", "home", "v"); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf("redis-ring://%s?names=a", servers[0].Addr)
	nodes := servers[1].Addr + "," + servers[2].Addr
	for _, samples := range []string{"0", "20"} {
		t.Run("samples="+samples, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", "verify", "--config", cfg, "--nodes", nodes, "--samples", samples)
			if code != 1 {
				t.Fatalf("exit %d, want 1\nstdout: %s\nstderr: %s", code, out, errOut)
			}
			if !strings.Contains(out, fmt.Sprintf("%d keys scanned, %d misplaced", onB+onC+1, onB+onC)) {
				t.Errorf("the counts are missing:\n%s", out)
			}
			for _, want := range []string{
				fmt.Sprintf("%d misplaced on %s", onB, servers[1].Addr),
				fmt.Sprintf("%d misplaced on %s", onC, servers[2].Addr),
			} {
				if !strings.Contains(out, want) {
					t.Errorf("stdout lacks %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, "misplaced on "+servers[0].Addr) {
				t.Errorf("a node without misplaced keys is listed:\n%s", out)
			}
		})
	}
	// Clean: no per-node line, status 0.
	code, out, errOut := runCLI(t, "", "verify", "--config", cfg)
	if code != 0 || out != "1 keys scanned, 0 misplaced\n" {
		t.Errorf("clean verify: exit %d\nstdout: %q\nstderr: %s", code, out, errOut)
	}
}

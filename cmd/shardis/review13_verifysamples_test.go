package main

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
)

// verify --samples 0 listed 20 keys (the library's default for 0), and a
// negative count was taken without a word.
func TestReview13VerifySamples(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	ring := fmt.Sprintf("redis-ring://%s?names=a", servers[0].Addr)
	for i := 0; i < 3; i++ {
		if _, err := servers[1].Do("SET", fmt.Sprintf("stray%d", i), "1"); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		samples     string
		code, lines int
	}{{"0", 1, 0}, {"2", 1, 2}, {"-1", 2, 0}} {
		code, out, errOut := runCLI(t, "", "verify", "--config", ring, "--nodes", servers[1].Addr, "--samples", tc.samples)
		listed := len(regexp.MustCompile(`(?m)^misplaced `).FindAllString(out, -1))
		if code != tc.code || listed != tc.lines {
			t.Errorf("--samples %s: exit %d listing %d keys, want %d listing %d\nstdout: %s\nstderr: %s",
				tc.samples, code, listed, tc.code, tc.lines, out, errOut)
		}
	}
}

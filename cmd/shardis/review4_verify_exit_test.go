package main

import (
	"fmt"
	"net"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
)

// shardis verify tells a script "keys are misplaced" (status 1) from "the
// scan could not be done" (status 3: a node it had to scan did not
// answer), which both exited 1; and --nodes takes "a, b" as written by a
// person, spaces after the commas included.
func TestVerifyExitStatusSaysWhetherItCouldCheck(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	ring := fmt.Sprintf("redis-ring://%s?names=a", servers[0].Addr)
	if _, err := servers[1].Do("SET", "stray", "1"); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()

	cases := []struct {
		name  string
		nodes string
		code  int
	}{
		{"nothing misplaced", "", 0},
		{"a stray key on an extra node, listed with a space", " " + servers[1].Addr, 1},
		{"an extra node that does not answer", dead, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"verify", "--config", ring}
			if tc.nodes != "" {
				args = append(args, "--nodes", servers[0].Addr+","+tc.nodes)
			}
			code, out, errOut := runCLI(t, "", args...)
			if code != tc.code {
				t.Fatalf("exit status %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errOut)
			}
		})
	}
}

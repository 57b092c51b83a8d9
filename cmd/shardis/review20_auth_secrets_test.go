package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
)

// A wrong password (or user) given to a command that reaches a real
// server fails verify and reshard with the server's refusal, and neither the password tried
// nor the right one appears in what the command prints.
func TestReview20WrongPasswordNotEchoed(t *testing.T) {
	const right, wrong = "R1ght-s3cr3t-20", "Wr0ng-s3cr3t-20"
	srv := redistest.StartTB(t, redistest.Options{DefaultPassword: right})
	other := redistest.StartTB(t, redistest.Options{DefaultPassword: right})
	bad := []string{
		fmt.Sprintf("redis-ring://:%s@%s", wrong, srv.Addr),
		fmt.Sprintf("redis-ring://nosuchuser:%s@%s", wrong, srv.Addr),
		fmt.Sprintf("redis-cluster://:%s@%s", wrong, srv.Addr),
	}
	good := fmt.Sprintf("redis-ring://:%s@%s", right, other.Addr)
	for _, url := range bad {
		cases := [][]string{
			{"verify", "--config", url},
			{"nodes", "--config", url},
			{"stats", "--config", url, "--no-probe"},
			{"reshard", "--from", url, "--to", good, "--dry-run"},
			{"reshard", "--from", good, "--to", url, "--dry-run"},
		}
		for _, args := range cases {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				code, out, errOut := runCLI(t, "", args...)
				// nodes and stats --no-probe of a ring need no connection.
				if code == 0 && (args[0] == "verify" || args[0] == "reshard") {
					t.Fatalf("exit 0 with a wrong password\nstdout: %s\nstderr: %s", out, errOut)
				}
				for _, s := range []string{right, wrong} {
					if strings.Contains(out+errOut, s) {
						t.Errorf("a password is printed:\nstdout: %s\nstderr: %s", out, errOut)
					}
				}
			})
		}
	}
}

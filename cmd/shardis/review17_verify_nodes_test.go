package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
)

// A --nodes entry pasted with its credentials (":pw@host:port", a URL)
// was printed back with the password ("node :pw@host:port: bad node
// address ..."), and the run exited 3, "the scan could not be done", as
// for a node that did not answer, when the command line was wrong.
func TestReview17VerifyBadNodesArgIsAUsageErrorWithoutSecret(t *testing.T) {
	const secret = "n0desS3cret"
	srv := redistest.StartTB(t, redistest.Options{DefaultPassword: secret})
	cfg := "redis-ring://:" + secret + "@" + srv.Addr
	for i, n := range []string{
		":" + secret + "@" + srv.Addr,
		"default:" + secret + "@" + srv.Addr,
		"redis://:" + secret + "@" + srv.Addr,
		srv.Addr + "?password=" + secret,
		"no-port",
	} {
		t.Run(strconv.Itoa(i), func(t *testing.T) { // the name is printed: not n
			code, out, errOut := runCLI(t, "", "verify", "--config", cfg, "--nodes", n)
			if code != 2 || !strings.Contains(errOut, "--nodes") {
				t.Errorf("exit %d, want 2 and a word on --nodes\nstdout: %s\nstderr: %s", code, out, errOut)
			}
			if strings.Contains(out+errOut, secret) {
				t.Errorf("the password is printed:\nstdout: %s\nstderr: %s", out, errOut)
			}
		})
	}
	// A good one, spaces after the commas as a person writes them.
	code, out, errOut := runCLI(t, "", "verify", "--config", cfg, "--nodes", srv.Addr+", "+srv.Addr)
	if code != 0 {
		t.Errorf("exit %d, want 0\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}

package main

import (
	"strings"
	"testing"
)

// "user:password@host:port" given where a config file or URL belongs
// (--config, --from, --to) was taken for a file name and printed back
// whole: "open user:password@host:port: no such file or directory".
func TestReview17ConfigAddressWithCredentialsNotEchoed(t *testing.T) {
	const secret = "cfgS3cretPW"
	addr := "default:" + secret + "@127.0.0.1:1"
	cases := [][]string{
		{"verify", "--config", addr},
		{"reshard", "--from", addr, "--to", "redis-ring://127.0.0.1:2"},
		{"reshard", "--from", "redis-ring://127.0.0.1:2", "--to", ":" + secret + "@127.0.0.1:1"},
		{"nodes", "--config", addr},
		{"stats", "--config", addr},
		{"demo", "--config", addr},
		{"locate", "--config", addr, "k"},
		{"subscribe", "--config", addr, "ch"},
		{"bench", "e2e", "--config", addr},
	}
	for _, args := range cases {
		t.Run(strings.Join(args[:2], " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, "", args...)
			if code != 2 {
				t.Errorf("exit %d, want 2\nstderr: %s", code, errOut)
			}
			if strings.Contains(out+errOut, secret) {
				t.Errorf("the password is printed:\nstdout: %s\nstderr: %s", out, errOut)
			}
			if !strings.Contains(errOut, "127.0.0.1:1") || !strings.Contains(errOut, "URL") {
				t.Errorf("the error neither names the argument nor points to a URL:\n%s", errOut)
			}
		})
	}
}

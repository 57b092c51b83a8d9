package main

import (
	"strings"
	"testing"
)

// A URL given as the value of a flag that takes a number, a duration or
// a bool (a flag's value left out, so that the next word took its place,
// or --dry-run=URL) was quoted by the flag package's usage error, on
// stderr, with its password. The command still ends with a usage error,
// but the URL is shown without its user info and options.
func TestReview20FlagValueURLNotEchoed(t *testing.T) {
	const secret = "Fl4g-s3cr3t-20"
	url := "redis-ring://app:" + secret + "@127.0.0.1:1?sentinel_password=" + secret
	cases := [][]string{
		{"verify", "--samples", url},
		{"verify", "--config", "redis-ring://127.0.0.1:1", "--samples=" + url},
		{"reshard", "--from", "redis-ring://127.0.0.1:1", "--to", "redis-ring://127.0.0.1:2", "--batch", url},
		{"reshard", "--from", "redis-ring://127.0.0.1:1", "--to", "redis-ring://127.0.0.1:2", "--timeout", url},
		{"reshard", "--from", "redis-ring://127.0.0.1:1", "--to", "redis-ring://127.0.0.1:2", "--dry-run=" + url},
		{"reshard", "--from", "redis-ring://127.0.0.1:1", "--to", "redis-ring://127.0.0.1:2", "-max-block", url},
		{"demo", "--keys", url},
		{"stats", "--ops", "app:" + secret + "@127.0.0.1:1"},
		{"bench", "e2e", "--duration", url},
	}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, "", args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (a usage error)\nstderr: %s", code, errOut)
			}
			if !strings.Contains(errOut, "invalid") {
				t.Errorf("stderr does not say the value is invalid:\n%s", errOut)
			}
			if strings.Contains(out+errOut, secret) {
				t.Errorf("the password is printed:\nstdout: %s\nstderr: %s", out, errOut)
			}
		})
	}
}

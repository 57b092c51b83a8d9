package main

import (
	"strings"
	"testing"
)

// TestReview14RateTooLargeIsAUsageError: --rate checked the number it
// read for infinity before multiplying it by the unit, so "1e308GB/s"
// passed as +Inf bytes per second: the command went on to reach the
// nodes, and only the move refused that pace, as a bad config naming
// "+Inf" instead of the flag. A pace whose bytes per
// second overflow is a usage error about --rate, like "Inf".
func TestReview14RateTooLargeIsAUsageError(t *testing.T) {
	for _, rate := range []string{"1e308GB/s", "1.7e308KB", "9e307mb"} {
		t.Run(rate, func(t *testing.T) {
			if k, b, err := parseRate(rate); err == nil {
				t.Errorf("parseRate(%q) = %v keys/s, %v bytes/s, want an error", rate, k, b)
			}
			code, _, errOut := runCLI(t, "", "reshard", "--from", "redis-ring://127.0.0.1:1", "--to", "redis-ring://127.0.0.1:2", "--rate", rate)
			if code != 2 || !strings.Contains(errOut, "--rate") {
				t.Errorf("exit %d, %q; want 2 and a message about --rate", code, errOut)
			}
		})
	}
}

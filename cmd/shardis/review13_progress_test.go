package main

import (
	"strings"
	"testing"
)

// demo and bench drew their progress bar with carriage returns whatever
// stderr was: in a log file or a CI job's output it was one long line of
// redraws. Off a terminal they write plain lines, as reshard does.
func TestReview13ProgressOffATerminalHasNoCarriageReturns(t *testing.T) {
	cases := [][]string{
		{"demo", "--keys", "3000", "--batch", "100"},
		{"bench", "placement", "--generate", "2000", "--strategies", "murmur3", "--lookup-time", "1ms"},
	}
	for _, args := range cases {
		t.Run(args[0], func(t *testing.T) {
			code, out, errOut := runCLI(t, "", args...)
			if code != 0 {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %q", code, out, errOut)
			}
			if errOut == "" {
				t.Fatal("no progress written at all")
			}
			if strings.Contains(errOut, "\r") {
				t.Errorf("carriage returns on a stderr that is no terminal: %q", errOut)
			}
			if !strings.HasSuffix(errOut, "\n") {
				t.Errorf("the progress does not end its line: %q", errOut)
			}
		})
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bench placement --keys naming a file that cannot be read (a typo, a
// number meant for --generate) or that holds no key exited 1, the status
// of a run that failed, with "keys: open ..." that did not name the
// flag: it is a usage error (status 2) that names --keys, in one line.
func TestReview21BenchKeysFileIsUsageError(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.txt")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{filepath.Join(t.TempDir(), "missing.txt"), "5000", t.TempDir(), empty} {
		code, out, errOut := runCLI(t, "", "bench", "placement", "--keys", file)
		if code != 2 {
			t.Errorf("--keys %s: exit %d, want 2\nstderr: %s", file, code, errOut)
		}
		if out != "" {
			t.Errorf("--keys %s: stdout %q, want none", file, out)
		}
		if !strings.Contains(errOut, "--keys") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("--keys %s: want one line naming --keys:\n%s", file, errOut)
		}
	}
}

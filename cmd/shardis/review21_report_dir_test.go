package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bench --report DIR where no directory can be made (under a regular
// file, say) was found out only after the whole run, minutes of it for a
// large placement or an e2e run against production servers, whose
// figures then went to the terminal alone. The directory is now made
// before anything runs: a usage error (status 2) naming --report, at
// once, with nothing run.
func TestReview21BenchReportDirCheckedFirst(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(file, "report")
	for _, args := range [][]string{
		{"bench", "placement", "--generate", "2000", "--strategies", "murmur3", "--report", dir},
		{"bench", "e2e", "--duration", "200ms", "--callers", "1", "--pipelines", "", "--multi", "", "--report", dir},
	} {
		code, out, errOut := runCLI(t, "", args...)
		if code != 2 || out != "" {
			t.Errorf("%s: exit %d, stdout %q; want 2 and nothing run\nstderr: %s", args[1], code, out, errOut)
		}
		if !strings.Contains(errOut, "--report") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%s: want one line naming --report:\n%s", args[1], errOut)
		}
	}
}

//go:build linux

package cpustat

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestChildrenLongName: the kernel keeps only the first 15 bytes of a
// process's command name, so a name longer than that never matched and
// the servers' CPU read as 0. A child whose executable has a 21-byte name
// and burns CPU must be counted under its full name.
func TestChildrenLongName(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("no sh: %v", err)
	}
	data, err := os.ReadFile(sh)
	if err != nil {
		t.Fatal(err)
	}
	const name = "cpustat-long-name-sh1" // 21 bytes
	bin := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	deadline := time.Now().Add(30 * time.Second)
	for Children(name) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("Children(%q) stayed 0 for 30 s while the child spun", name)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := Children(name[:14]); got != 0 {
		t.Errorf("Children(%q) = %v: a prefix of the name is another name", name[:14], got)
	}
}

package peers

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The directory the fakeredis binary is built into goes when the test
// process ends, as every other file a test makes: each run used to leave
// a few megabytes in the temporary directory.
func TestReview15FakeredisBuildDirRemoved(t *testing.T) {
	if os.Getenv("SHARDIS_PEERS_BUILD_FAKE_ONLY") == "1" {
		bin, err := fakeBinary()
		if err != nil {
			t.Fatal(err)
		}
		os.Stdout.WriteString("\nfakeredis=" + bin + "\n")
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestReview15FakeredisBuildDirRemoved$", "-test.count=1")
	cmd.Env = append(os.Environ(), "SHARDIS_PEERS_BUILD_FAKE_ONLY=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("test process: %v\n%s", err, out)
	}
	var bin string
	for _, line := range strings.Split(string(out), "\n") {
		if b, ok := strings.CutPrefix(line, "fakeredis="); ok {
			bin = b
		}
	}
	if bin == "" {
		t.Fatalf("the test process did not build fakeredis:\n%s", out)
	}
	if _, err := os.Stat(filepath.Dir(bin)); !os.IsNotExist(err) {
		os.RemoveAll(filepath.Dir(bin))
		t.Errorf("%s is still there after the test process ended (stat: %v)", filepath.Dir(bin), err)
	}
}

package redistest

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// Names of the binaries this package runs; both must be on PATH.
const (
	serverBin = "redis-server"
	cliBin    = "redis-cli"
)

// Available returns nil when redis-server and redis-cli are both on PATH,
// and an error wrapping ErrUnavailable otherwise.
func Available() error {
	for _, bin := range []string{serverBin, cliBin} {
		if _, err := exec.LookPath(bin); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrUnavailable, bin, err)
		}
	}
	return nil
}

// inCI reports whether the CI environment variable asks for strict mode:
// any non-empty value other than "false".
func inCI() bool {
	v := os.Getenv("CI")
	return v != "" && v != "false"
}

// Require stops the test when redis-server or redis-cli is missing: it
// fails the test when the environment variable CI is set to anything but
// "" or "false" (so a CI run cannot pass by skipping), and skips it with a
// message saying what to install otherwise.
func Require(tb testing.TB) {
	tb.Helper()
	err := Available()
	if err == nil {
		return
	}
	if inCI() {
		tb.Fatalf("%v (CI is set, so this is a failure, not a skip; install redis-server and redis-tools)", err)
		return
	}
	tb.Skipf("%v; install redis-server and redis-tools (Debian) to run this test", err)
}

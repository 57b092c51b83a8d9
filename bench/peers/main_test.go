package peers

import (
	"os"
	"testing"
)

// TestMain removes the fakeredis build directory when the tests and
// benchmarks end, whatever their outcome.
func TestMain(m *testing.M) {
	code := m.Run()
	if fakeDir != "" {
		os.RemoveAll(fakeDir)
	}
	os.Exit(code)
}

package pool

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine running: a pool,
// a dial or a server helper that does not clean up after itself.
func TestMain(m *testing.M) {
	skipExamplesWithoutRedis()
	goleak.VerifyTestMain(m)
}

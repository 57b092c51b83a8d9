package shard_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when any test leaves a goroutine behind:
// clients must stop every background loop and worker on Close.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

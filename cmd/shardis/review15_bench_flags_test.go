package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Key counts that cannot be generated are usage errors, told before any
// work: a count too large to hold in memory used to end the process with a
// fatal out-of-memory error, and an explicit --generate 0 quietly placed
// 100000 keys.
func TestReview15BenchPlacementGenerateBounds(t *testing.T) {
	for _, c := range []struct {
		n    string
		want string
	}{
		{"100000000000", "keys requested"},
		{"10000001", "keys requested"},
		{"0", "--generate"},
	} {
		code, out, errOut := benchCLI(context.Background(), "", "bench", "placement", "--generate", c.n, "--lookup-time", "1ms")
		assert.Equal(t, 2, code, "--generate %s: %s", c.n, errOut)
		assert.Contains(t, errOut, c.want, "--generate %s", c.n)
		assert.Empty(t, out, "--generate %s", c.n)
	}
}

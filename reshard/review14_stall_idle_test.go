package reshard

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The idle times of MIGRATE's connections read from CLIENT LIST: a value
// too large for a time.Duration counts as the longest one, never as a
// negative duration (which the stall watch would take for activity).
func TestReview14MigrateIdleOfHugeValues(t *testing.T) {
	cases := []struct {
		name string
		line string
		want time.Duration
	}{
		{"plain", "id=3 addr=127.0.0.1:5 name= idle=7 cmd=restore-asking", 7 * time.Second},
		{"huge", "id=3 addr=127.0.0.1:5 name= idle=9223372036854775807 cmd=restore", time.Duration(math.MaxInt64 / int64(time.Second) * int64(time.Second))},
		{"just past a Duration", "id=3 name= idle=9223372037 cmd=auth", time.Duration(math.MaxInt64 / int64(time.Second) * int64(time.Second))},
		{"negative", "id=3 name= idle=-5 cmd=select", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseMigrateIdle(tc.line + "\n")
			require.NoError(t, err)
			require.Len(t, got, 1)
			assert.Equal(t, tc.want, got[0])
			assert.GreaterOrEqual(t, got[0], time.Duration(0))
		})
	}
	got, err := parseMigrateIdle("id=4 name=shardis-x idle=9 cmd=restore\nid=5 name= idle=9 cmd=get\n")
	require.NoError(t, err)
	assert.Empty(t, got, "named connections and other commands are not MIGRATE's")
}

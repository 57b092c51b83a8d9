package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/shardis/shardis/reshard"
)

// TestReview20ReshardReportSaysWhatTheRescansMoved: the report of a move
// that moved keys after its verification found them left behind says
// how many and in how many passes; one without such passes says nothing
// of them.
func TestReview20ReshardReportSaysWhatTheRescansMoved(t *testing.T) {
	for _, tt := range []struct {
		name string
		rep  reshard.Report
		want string // "" : no word of passes
	}{
		{"none", reshard.Report{Moved: 70}, ""},
		{"one pass", reshard.Report{Moved: 70, Rescans: 1, RescanMoved: 30}, "; 30 of them found left behind by the verification and moved in 1 more pass\n"},
		{"two passes", reshard.Report{Moved: 70, Rescans: 2, RescanMoved: 31}, "; 31 of them found left behind by the verification and moved in 2 more passes\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			printReport(&b, &tt.rep, false)
			if tt.want == "" {
				assert.NotContains(t, b.String(), "left behind")
				return
			}
			assert.Contains(t, b.String(), tt.want)
		})
	}
}

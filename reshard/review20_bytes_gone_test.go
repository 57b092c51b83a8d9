package reshard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/reshard"
)

// TestReview20BytesCountKeysThatLeftBeforeTheyWereMeasured: half the
// keys of a page leave the old node (moved by clients on touch, or
// deleted) after its SCAN and before their MEMORY USAGE, which answers
// nil for them: they count no bytes, and the batch's MIGRATE (or DUMP)
// skips them. The bytes of the batch were scaled by the share of its keys
// moved, gone ones included, so Report.Bytes and Flow.Bytes showed half
// the bytes of the keys that did move. They now show all of them.
func TestReview20BytesCountKeysThatLeftBeforeTheyWereMeasured(t *testing.T) {
	for _, dump := range []bool{false, true} {
		t.Run(fmt.Sprintf("dump=%v", dump), func(t *testing.T) {
			const n = 20
			servers, from, to := moveAll(t)
			fillRandomValues(t, servers[0].Addr, "b:", n, 1000)
			gone := removeHalfOnFirstPage(t, servers[0].Addr, "b", n)
			rep, err := reshard.Move(context.Background(), reshard.Options{From: from, To: to, SkipClientCheck: true, ScanCount: 1000, Dump: dump})
			require.NoError(t, gone.err)
			want := gone.want // the old node's MEMORY USAGE of the keys that stay for the mover
			require.NoError(t, err)
			require.EqualValues(t, n/2, rep.Moved)
			require.Greater(t, want, int64(n/2*1000), "precondition: the keys measured")
			assert.Equal(t, want, rep.Bytes, "Report.Bytes: the bytes of the keys moved")
			require.Len(t, rep.Flows, 1)
			assert.Equal(t, want, rep.Flows[0].Bytes, "Flow.Bytes")
		})
	}
}

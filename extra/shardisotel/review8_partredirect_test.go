package shardisotel_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// emptySlotKey returns a key whose slot m serves and holds no key, and
// the slot, so that the slot can be moved by assigning it.
func emptySlotKey(t *testing.T, rc *redistest.Cluster, m *redistest.Server, prefix string) (string, int) {
	t.Helper()
	for i := 0; ; i++ {
		key, slot := keyOnMaster(t, rc, m, fmt.Sprintf("%s%d-", prefix, i))
		n, err := m.Do("CLUSTER", "COUNTKEYSINSLOT", strconv.Itoa(slot))
		require.NoError(t, err)
		if strings.TrimSpace(n) == "0" {
			return key, slot
		}
		require.Less(t, i, 1000, "no empty slot")
	}
}

// assignSlot gives slot to the node whose ID is id, on both nodes.
func assignSlot(t *testing.T, slot int, id string, nodes ...*redistest.Server) {
	t.Helper()
	for _, srv := range nodes {
		_, err := srv.Do("CLUSTER", "SETSLOT", strconv.Itoa(slot), "NODE", id)
		require.NoError(t, err, "SETSLOT on %s", srv.Addr)
	}
}

// TestReview8PipelinePartWithRedirectAndErrorIsAnError: a node's part of
// a pipeline in which one command was redirected (MOVED) and another
// failed for good (WRONGTYPE) is a failed part: its span has status
// Error and error.type, as it has when the failing command comes first.
// Before, the part's outcome was that of its first command that did not
// succeed, the redirect, and the failure did not show on the part's span.
func TestReview8PipelinePartWithRedirectAndErrorIsAnError(t *testing.T) {
	rc := clusterForTest(t)
	ctx := context.Background()
	masters := rc.Masters()
	from, to := masters[1], masters[2]
	moved, slot := emptySlotKey(t, rc, from, "r8pm")
	list, _ := keyOnMaster(t, rc, from, "r8pl")
	for _, order := range []string{"redirect first", "error first"} {
		t.Run(order, func(t *testing.T) {
			tel := newTelemetry(t, rc)
			_, err := tel.c.Do(ctx, "SET", list, "a string")
			require.NoError(t, err)
			t.Cleanup(func() { tel.c.Do(ctx, "DEL", list) }) //nolint:errcheck // best effort
			assignSlot(t, slot, nodeID(t, to), to, from)
			t.Cleanup(func() { assignSlot(t, slot, nodeID(t, from), from, to) })

			p := tel.c.Pipeline()
			if order == "redirect first" {
				p.Send("GET", moved)
				p.Send("LPUSH", list, "x")
			} else {
				p.Send("LPUSH", list, "x")
				p.Send("GET", moved)
			}
			res, err := p.Exec(ctx)
			require.NoError(t, err)
			require.Len(t, res, 2)

			var part sdktrace.ReadOnlySpan
			for _, sp := range tel.spans.Ended() {
				if sp.Name() == "PIPELINE "+from.Addr {
					part = sp
				}
			}
			require.NotNil(t, part, "no span for %s's part", from.Addr)
			names := map[string]bool{}
			for _, ev := range spanEvents(part) {
				names[ev["name"]] = true
			}
			assert.True(t, names["redirect"], "the MOVED shows: %v", spanEvents(part))
			assert.Equal(t, codes.Error, part.Status().Code, "a command of the part failed: %v", part.Status())
			assert.NotEmpty(t, attrs(part.Attributes())["error.type"])
			var failed map[string]string
			for _, ev := range spanEvents(part) {
				if ev["name"] == "attempt failed" {
					failed = ev
				}
			}
			require.NotNil(t, failed, "the failure shows: %v", spanEvents(part))
			assert.NotEmpty(t, failed["error.type"], "%v", failed)
			assert.Equal(t, "server_error", failed["shardis.outcome"], "%v", failed)

			// The part's duration is measured with that outcome too.
			var rm metricdata.ResourceMetrics
			require.NoError(t, tel.reader.Collect(ctx, &rm))
			outcomes := map[string]uint64{}
			for _, p := range histPoints(t, rm, "db.client.operation.duration") {
				a := attrs(p.Attributes.ToSlice())
				if a["db.operation.name"] == "PIPELINE" && a["server.address"]+":"+a["server.port"] == from.Addr {
					outcomes[a["shardis.outcome"]] += p.Count
				}
			}
			assert.Equal(t, map[string]uint64{"server_error": 1}, outcomes)
		})
	}
}

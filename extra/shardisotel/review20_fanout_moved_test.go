package shardisotel_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview20FanOutRedirectNamesBothNodes: a pipeline and a split MGET
// that send one command to a node whose slot moved away (MOVED) have a
// child span at that node holding the redirect, from it to the new owner,
// and one at the new owner that answered, each naming its node.
func TestReview20FanOutRedirectNamesBothNodes(t *testing.T) {
	rc := clusterForTest(t)
	ctx := context.Background()
	masters := rc.Masters()
	require.Len(t, masters, 3)
	other, from, to := masters[0], masters[1], masters[2]
	moved, slot := emptySlotKey(t, rc, from, "r20mv")
	stay, _ := keyOnMaster(t, rc, other, "r20st")
	for _, tc := range []struct {
		name, op, part string // the operation's span, the parts' operation name
		run            func(tel *telemetry) error
	}{
		{"pipeline", "PIPELINE", "GET", func(tel *telemetry) error {
			p := tel.c.Pipeline()
			p.Send("GET", moved)
			p.Send("GET", stay)
			_, err := p.Exec(ctx)
			return err
		}},
		{"mget", "MGET", "MGET", func(tel *telemetry) error {
			_, err := tel.c.Do(ctx, "MGET", moved, stay)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tel := newTelemetry(t, rc)
			_, err := tel.c.Do(ctx, "GET", moved) // the client routes the slot to from
			require.NoError(t, err)
			assignSlot(t, slot, nodeID(t, to), to, from)
			t.Cleanup(func() { assignSlot(t, slot, nodeID(t, from), from, to) })
			tel.spans.Reset()
			require.NoError(t, tc.run(tel))

			ended := tel.spans.Ended()
			require.NotEmpty(t, ended)
			root := ended[len(ended)-1]
			require.Equal(t, tc.op, root.Name())
			children := map[string][]map[string]string{} // events by child span name
			for _, s := range ended[:len(ended)-1] {
				require.Equal(t, root.SpanContext().SpanID(), s.Parent().SpanID(), s.Name())
				a := attrs(s.Attributes())
				assert.Equal(t, s.Name(), tc.part+" "+a["server.address"]+":"+a["server.port"])
				children[s.Name()] = spanEvents(s)
			}
			require.Contains(t, children, tc.part+" "+from.Addr, "%v", children)
			require.Contains(t, children, tc.part+" "+to.Addr, "%v", children)
			require.Contains(t, children, tc.part+" "+other.Addr, "%v", children)
			evs := children[tc.part+" "+from.Addr]
			require.Len(t, evs, 1, "%v", evs)
			assert.Equal(t, "redirect", evs[0]["name"])
			assert.Equal(t, "MOVED", evs[0]["shardis.redirect.kind"])
			assert.Equal(t, from.Addr, evs[0]["shardis.redirect.from"])
			assert.Equal(t, to.Addr, evs[0]["shardis.redirect.to"])
			assert.Empty(t, children[tc.part+" "+to.Addr], "the new owner answered")
		})
	}
}

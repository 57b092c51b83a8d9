package shardisotel_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview20EveryNodeOfAFanOutHasItsSpan: an MGET or a pipeline spread
// over the three masters, two commands to one of them and one to each of
// the others, gives one child span per master, each naming its master:
// a node that got a single command is not left out of the trace. A
// split command's parts are named after it; a pipeline's command alone
// on its node after itself, as its duration's measurement is.
func TestReview20EveryNodeOfAFanOutHasItsSpan(t *testing.T) {
	rc := clusterForTest(t)
	tel := newTelemetry(t, rc)
	ctx := context.Background()
	masters := rc.Masters()
	require.Len(t, masters, 3)
	a1, _ := keyOnMaster(t, rc, masters[0], "r20fa1-")
	a2, _ := keyOnMaster(t, rc, masters[0], "r20fa2-")
	b, _ := keyOnMaster(t, rc, masters[1], "r20fb-")
	c, _ := keyOnMaster(t, rc, masters[2], "r20fc-")
	want := map[string]int{masters[0].Addr: 2, masters[1].Addr: 1, masters[2].Addr: 1}
	_, err := tel.c.Do(ctx, "GET", a1) // the client knows the slot map
	require.NoError(t, err)

	for _, tc := range []struct {
		name, op string
		parts    map[string]string // operation name by node
		run      func() error
	}{
		{"mget", "MGET", map[string]string{masters[0].Addr: "MGET", masters[1].Addr: "MGET", masters[2].Addr: "MGET"}, func() error {
			_, err := tel.c.Do(ctx, "MGET", a1, a2, b, c)
			return err
		}},
		{"pipeline", "PIPELINE", map[string]string{masters[0].Addr: "PIPELINE", masters[1].Addr: "SET", masters[2].Addr: "GET"}, func() error {
			p := tel.c.Pipeline()
			p.Send("SET", a1, "1")
			p.Send("SET", a2, "2")
			p.Send("SET", b, "3")
			p.Send("GET", c)
			_, err := p.Exec(ctx)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tel.spans.Reset()
			require.NoError(t, tc.run())
			ended := tel.spans.Ended()
			require.NotEmpty(t, ended)
			parent := ended[len(ended)-1]
			require.False(t, parent.Parent().SpanID().IsValid(), "the operation's span ends last")
			assert.Equal(t, tc.op, parent.Name())
			got := map[string]int{}
			for _, s := range ended[:len(ended)-1] {
				assert.Equal(t, parent.SpanContext().SpanID(), s.Parent().SpanID(), s.Name())
				a := attrs(s.Attributes())
				assert.Equal(t, "redis", a["db.system.name"], s.Name())
				node := a["server.address"] + ":" + a["server.port"]
				assert.Equal(t, tc.parts[node], a["db.operation.name"], s.Name())
				assert.Equal(t, tc.parts[node]+" "+node, s.Name())
				n, err := strconv.Atoi(a["db.operation.batch.size"])
				require.NoError(t, err, s.Name())
				got[node] += n
			}
			assert.Equal(t, want, got, "commands per master in the child spans")
		})
	}
}

package shardisprom_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/shardis/shardis/extra/shardisprom"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// commandErrors gathers reg and returns shardis_command_errors_total by
// "node outcome cause".
func commandErrors(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "shardis_command_errors_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			require.Len(t, l, 3, "labels %v: want node, outcome and cause", l)
			out[l["node"]+" "+l["outcome"]+" "+l["cause"]] = m.GetCounter().GetValue()
		}
	}
	return out
}

// keyOn returns a key that c routes to the node at addr.
func keyOn(t *testing.T, c *shard.Client, addr, prefix string) string {
	t.Helper()
	for i := range 10000 {
		k := fmt.Sprintf("%s%d", prefix, i)
		n, err := c.Router().Route(k)
		require.NoError(t, err)
		if n.Addr == addr {
			return k
		}
	}
	t.Fatalf("no key on %s", addr)
	return ""
}

// TestReview21ErrorsByNodeAndCause: the duration histogram's outcome says
// server_error or failed, not which: a node answering WRONGTYPE to a
// caller's bug, a node refusing connections, a transaction aborted by a
// watched key looked alike. shardis_command_errors_total counts the
// attempts that failed by node, outcome and cause, from a bounded set:
// a server's error code only when it is one Redis defines (a script's
// made-up text, which may hold anything, is "other"), the connection's
// failure as dial, io, timeout or node_down, tx_aborted for ErrTxAborted.
func TestReview21ErrorsByNodeAndCause(t *testing.T) {
	d := shardisprom.NewDurations(nil, nil)
	c, servers := ringClient(t, 3, d.Hooks())
	a, b, dead := servers[0], servers[1], servers[2]
	ctx := context.Background()
	ka := keyOn(t, c, a.Addr, "r21ca-")
	kb := keyOn(t, c, b.Addr, "r21cb-")
	kb2 := keyOn(t, c, b.Addr, "r21cb2-")
	kdead := keyOn(t, c, dead.Addr, "r21cd-")
	require.NoError(t, dead.Kill())

	_, err := c.Do(ctx, "SET", ka, "v")
	require.NoError(t, err)
	_, err = c.Do(ctx, "LPUSH", ka, "x")
	require.ErrorContains(t, err, "WRONGTYPE")
	const secret = "Script-Secret-7f3"
	_, err = c.Do(ctx, "EVAL", fmt.Sprintf("return redis.error_reply('%s boom')", secret), 1, ka)
	require.ErrorContains(t, err, secret)
	_, err = c.Do(ctx, "EVAL", "return redis.error_reply('MADEUPCODE boom')", 1, ka)
	require.ErrorContains(t, err, "MADEUPCODE")

	// A pipeline's part on b: its failed command counts once, with its
	// cause.
	_, err = c.Do(ctx, "SET", kb, "v")
	require.NoError(t, err)
	p := c.Pipeline()
	p.Send("GET", kb2)
	p.Send("INCR", kb)
	p.Send("GET", kb)
	res, err := p.Exec(ctx)
	require.NoError(t, err)
	require.Len(t, res, 3)
	require.NoError(t, res[0].Err)
	require.ErrorContains(t, res[1].Err, "ERR")
	require.NoError(t, res[2].Err)

	// A transaction aborted by a watched key, on b.
	_, err = c.Tx(ctx, []string{kb2}, func(tx *shard.Tx) error {
		conn, err := redis.Dial("tcp", b.Addr, redis.DialUsername("app"), redis.DialPassword(password))
		if err != nil {
			return err
		}
		defer conn.Close()
		if _, err := conn.Do("SET", kb2, "changed"); err != nil {
			return err
		}
		return tx.Queue("SET", kb2, "2")
	})
	require.ErrorIs(t, err, shard.ErrTxAborted)

	// A shard that refuses connections (ring mode: not retried).
	_, err = c.Do(ctx, "GET", kdead)
	require.Error(t, err)

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(d)
	assert.Equal(t, map[string]float64{
		a.Addr + " server_error WRONGTYPE":  1,
		a.Addr + " server_error other":      2,
		b.Addr + " server_error ERR":        1, // INCR of a value that is not a number
		b.Addr + " server_error tx_aborted": 1,
		dead.Addr + " failed dial":          1,
	}, commandErrors(t, reg))

	problems, err := testutil.GatherAndLint(reg)
	require.NoError(t, err)
	assert.Empty(t, problems, "the names and help follow Prometheus's rules")

	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.PanicOnError}).
		ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	for _, bad := range []string{secret, "MADEUPCODE", password} {
		assert.NotContains(t, rec.Body.String(), bad)
	}
}

package shardisprom_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/shardis/shardis/extra/shardisprom"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview8URLCredentialsInNoLabel: a client configured from a URL
// with user info (redis-ring://app:PASSWORD@...), migrating to another
// URL's topology with its own credentials, and running AUTH itself,
// exports no password in any label: the node labels are host:port, the
// migration's are topology IDs, and operation is the command's name.
func TestReview8URLCredentialsInNoLabel(t *testing.T) {
	const secret = "url-Pa55-w0rd%/x"
	servers := redistest.StartNTB(t, 3, redistest.Options{Users: []redistest.User{{Name: "app", Password: secret}}})
	ctx := context.Background()
	userinfo := url.UserPassword("app", secret).String()
	from, err := shard.ParseURL(fmt.Sprintf("redis-ring://%s@%s,%s?names=a,b&health_interval=-1s", userinfo, servers[0].Addr, servers[1].Addr))
	require.NoError(t, err)
	to, err := shard.ParseURL(fmt.Sprintf("redis-ring://%s@%s,%s,%s?names=a,b,c&health_interval=-1s", userinfo, servers[0].Addr, servers[1].Addr, servers[2].Addr))
	require.NoError(t, err)
	d := shardisprom.NewDurations(nil, nil)
	from.Hooks = d.Hooks()
	c, err := shard.New(ctx, from)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	for i := range 20 {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("r8sec:%d", i), "v")
		require.NoError(t, err)
	}
	to.Migration = &shard.Migration{Armed: true}
	require.NoError(t, c.StartMigration(ctx, to))
	for i := range 20 {
		_, err := c.Do(ctx, "GET", fmt.Sprintf("r8sec:%d", i))
		require.NoError(t, err)
	}
	_, err = c.DoKey(ctx, "r8sec:0", "AUTH", "app", secret)
	require.NoError(t, err)

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(shardisprom.NewCollector(c, nil), d)
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.PanicOnError}).
		ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	text := rec.Body.String()
	assert.Contains(t, text, `operation="AUTH"`)
	assert.Contains(t, text, "shardis_migration_phase")
	for _, bad := range []string{secret, "Pa55", url.QueryEscape(secret), url.PathEscape(secret)} {
		assert.NotContains(t, text, bad)
	}
}

package shardisotel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/shardis/shardis/extra/shardisotel"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// TestReview8StatementsHideEverySecret: with statements on, the commands
// that carry credentials (AUTH, HELLO AUTH, MIGRATE AUTH and AUTH2, ACL
// SETUSER, CONFIG SET), sent alone or in a pipeline, whatever the case of
// their names, show "?" for the secrets in db.query.text, and no
// exported span or metric holds a secret.
func TestReview8StatementsHideEverySecret(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	tel := ringTelemetry(t, servers[:1], shardisotel.WithStatements(0))
	ctx := context.Background()
	host, port, err := net.SplitHostPort(servers[1].Addr)
	require.NoError(t, err)
	secrets := []string{"Secr3t-auth1", "Secr3t-auth2", "Secr3t-hello", "Secr3t-mig1", "Secr3t-mig2", "Secr3t-acl", "Secr3t-conf", "Secr3t-conf2"}
	cmds := [][]any{
		{"AUTH", secrets[0]},
		{"auth", "someone", secrets[1]},
		{"Hello", "3", "auth", "default", secrets[2], "SETNAME", "r8"},
		{"MIGRATE", host, port, "", "0", "1000", "AUTH", secrets[3], "KEYS", "r8:k"},
		{"migrate", host, port, "", "0", "1000", "COPY", "auth2", "someone", secrets[4], "KEYS", "r8:k"},
		{"ACL", "setuser", "r8user", "on", ">" + secrets[5], "~*", "+@all"},
		{"config", "SET", "maxmemory-policy", "noeviction", "masterauth", secrets[6], "masteruser", secrets[7]},
	}
	_, err = tel.c.Do(ctx, "SET", "r8:k", "v")
	require.NoError(t, err)
	for _, cmd := range cmds {
		tel.c.DoKey(ctx, "r8:k", cmd[0].(string), cmd[1:]...) //nolint:errcheck // only what is exported matters
	}
	p := tel.c.Pipeline()
	for _, cmd := range cmds {
		p.SendKey("r8:k", cmd[0].(string), cmd[1:]...)
	}
	p.Send("GET", "r8:k")
	_, err = p.Exec(ctx)
	require.NoError(t, err)

	var texts []string
	queries := 0
	for _, s := range tel.spans.Ended() {
		a := attrs(s.Attributes())
		if a["db.query.text"] != "" {
			queries++
		}
		texts = append(texts, fmt.Sprintf("%s %v %v %v", s.Name(), s.Attributes(), s.Events(), s.Status()))
	}
	require.GreaterOrEqual(t, queries, len(cmds)+1, "statements were recorded")
	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.reader.Collect(ctx, &rm))
	dump, err := json.Marshal(rm)
	require.NoError(t, err)
	all := strings.Join(texts, "\n") + string(dump)
	assert.Contains(t, all, "AUTH ?")
	assert.Contains(t, all, "config SET maxmemory-policy ? masterauth ? masteruser ?")
	for _, s := range secrets {
		assert.NotContains(t, all, s)
	}
	assert.NotContains(t, all, "Secr3t")
}

package reshard_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/ring"
	"github.com/stretchr/testify/require"
)

// Credentials given in a URL (user:password@) go to the pool options,
// not into the nodes' addresses, and an address holding them is refused:
// so the addresses that Verify's report (Misplaced, PerNode) and a
// ClientsError's ClientConn values carry never show the password, in
// String, %+v, %#v or JSON.
func TestReview12ReportsAndClientConnsNeverShowThePassword(t *testing.T) {
	const secret = "r12-out-S3cret"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	servers := redistest.StartNTB(t, 2, redistest.Options{DefaultPassword: secret})
	u := ringURL(servers, []string{"s0", "s1"}, nil)
	u = strings.Replace(u, "redis-ring://", "redis-ring://default:"+secret+"@", 1)
	cfg := mustParse(t, u)
	r, err := ring.New(cfg.RingConfig())
	require.NoError(t, err)
	// A key written straight to the node that does not own it.
	k := "r12secret:0"
	wrong := servers[0]
	if r.Shards()[r.Locate(k)].Addr == servers[0].Addr {
		wrong = servers[1]
	}
	conn, err := redis.Dial("tcp", wrong.Addr, redis.DialPassword(secret))
	require.NoError(t, err)
	defer conn.Close() // also an unnamed connection on an old node, for CheckClients
	_, err = conn.Do("SET", k, "v")
	require.NoError(t, err)

	rep, err := reshard.Verify(ctx, cfg, reshard.VerifyOptions{Samples: 10})
	require.NoError(t, err)
	require.EqualValues(t, 1, rep.Misplaced)
	require.Len(t, rep.Samples, 1)
	require.Equal(t, wrong.Addr, rep.Samples[0].Node)
	j, err := json.Marshal(rep)
	require.NoError(t, err)
	texts := map[string]string{
		"String": rep.Samples[0].String(),
		"%+v":    fmt.Sprintf("%+v", rep),
		"%#v":    fmt.Sprintf("%#v", rep),
		"JSON":   string(j),
	}

	other := mustParse(t, strings.Replace(ringURL(servers, []string{"s0", "s1"}, []int{1, 2}), "redis-ring://", "redis-ring://default:"+secret+"@", 1))
	err = reshard.CheckClients(ctx, cfg, other, false)
	var ce *reshard.ClientsError
	require.True(t, errors.As(err, &ce), "CheckClients: %v, want a *reshard.ClientsError naming the unnamed connection", err)
	require.NotEmpty(t, ce.Conns)
	cj, err := json.Marshal(ce.Conns)
	require.NoError(t, err)
	texts["ClientsError"] = ce.Error()
	texts["ClientConn %+v"] = fmt.Sprintf("%+v", ce.Conns)
	texts["ClientConn JSON"] = string(cj)
	t.Logf("%s\n%s", texts["String"], texts["ClientsError"])
	for how, text := range texts {
		if strings.Contains(text, secret) {
			t.Errorf("%s shows the password: %s", how, text)
		}
	}
}

package main

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNodesOnASentinelRing(t *testing.T) {
	set := redistest.StartSentinelsTB(t, redistest.SentinelOptions{Shards: 2})
	plain := redistest.StartTB(t, redistest.Options{})
	cfg := writeConfig(t, fmt.Sprintf(`
shards:
  - {name: a, sentinel: {master: master-0}}
  - {addr: %q, name: p}
  - {name: b, sentinel: {master: master-1}}
sentinel: {addrs: [%q, %q]}
`, plain.Addr, set.Addrs()[0], set.Addrs()[1]))
	code, out, errOut := runCLI(t, "", "nodes", "--config", cfg)
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, `0\s+a\s+sentinel:master-0\s+1`, out)
	assert.Regexp(t, `1\s+p\s+`+regexp.QuoteMeta(plain.Addr), out)
	for i, name := range []string{"a", "b"} {
		m, err := set.Master(i)
		require.NoError(t, err)
		r, err := set.Replica(i)
		require.NoError(t, err)
		assert.Regexp(t, name+`\s+master-`+fmt.Sprint(i)+`\s+`+regexp.QuoteMeta(m.Addr)+`\s+`+regexp.QuoteMeta(r.Addr)+`\s+0\s+ok`, out)
	}
}

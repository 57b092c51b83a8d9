package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStatsJSONAndWatch(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	cfg := writeConfig(t, fmt.Sprintf(`{"shards": [{"addr": %q, "name": "a"}, {"addr": %q, "name": "b"}]}`, servers[0].Addr, servers[1].Addr))

	// --json: one document with every node.
	code, out, errOut := runCLI(t, "", "stats", "--config", cfg, "--ops", "50", "--json")
	require.Equal(t, 0, code, errOut)
	var rep statsReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep), out)
	require.Len(t, rep.Nodes, 2)
	total := int64(0)
	for i, n := range rep.Nodes {
		assert.Equal(t, servers[i].Addr, n.Addr)
		assert.Equal(t, "up", n.State)
		total += n.Commands
	}
	// Each report PINGs every node first (checkedStats), and a node
	// counts every command sent to it.
	assert.Equal(t, int64(100+2), total, "50 SET + 50 GET, and a PING per node")
	assert.Equal(t, 100, rep.Probe.Commands)
	assert.Zero(t, rep.Probe.Failed)

	// --watch --json: one object per refresh, with a rate from the second on.
	code, out, errOut = runCLI(t, "", "stats", "--config", cfg, "--ops", "50", "--json", "--watch", "--interval", "100ms", "--count", "3")
	require.Equal(t, 0, code, errOut)
	var lines []statsReport
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var r statsReport
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r), sc.Text())
		lines = append(lines, r)
	}
	require.Len(t, lines, 3)
	var sums []int64
	for _, r := range lines {
		s := int64(0)
		for _, n := range r.Nodes {
			s += n.Commands
		}
		sums = append(sums, s)
	}
	assert.Equal(t, []int64{102, 204, 306}, sums, "the counters grow by one probe and a PING per node per refresh")
	rate := 0.0
	for _, n := range lines[2].Nodes {
		rate += n.CommandsPerSec
	}
	assert.Positive(t, rate)

	// --watch as a table.
	code, out, errOut = runCLI(t, "", "stats", "--config", cfg, "--ops", "10", "--watch", "--interval", "50ms", "--count", "2")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, 2, strings.Count(out, "--- "), out)
	assert.Equal(t, 2, strings.Count(out, "probe: 20 commands"), out)

	code, _, _ = runCLI(t, "", "stats", "--config", cfg, "--watch", "--interval", "0s")
	assert.Equal(t, 2, code)
}

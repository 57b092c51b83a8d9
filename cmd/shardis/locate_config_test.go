package main

import (
	"strings"
	"testing"
)

// TestLocateConfig reads the ring from a client config file. The expected
// shards are rows of Jedis's own placement (ring/testdata/
// placement-4-named-weighted.tsv): four named shards, weights 2, 1, 1, 5.
func TestLocateConfig(t *testing.T) {
	named := writeConfig(t, `hash: jedis
shards:
  - {addr: "127.0.0.1:6381", name: shard-a, weight: 2}
  - {addr: "127.0.0.1:6382", name: shard-b}
  - {addr: "127.0.0.1:6383", name: shard-c}
  - {addr: "127.0.0.1:6384", name: shard-d, weight: 5}
`)
	cluster := writeConfig(t, "mode: cluster\nseeds: [127.0.0.1:7000]\n")
	tests := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		want   string // stdout
		stderr string // a part of stderr
	}{
		{name: "keys as arguments", args: []string{"--config", named, "a", "b", "foo"},
			want: "a\t2\tshard-c\nb\t1\tshard-b\nfoo\t3\tshard-d\n"},
		{name: "keys on stdin", stdin: "a\nb\n", args: []string{"--config", named},
			want: "a\t2\tshard-c\nb\t1\tshard-b\n"},
		{name: "config and shards", args: []string{"--config", named, "--shards", "127.0.0.1:1", "a"}, code: 2,
			stderr: "--config gives the whole ring; drop --shards"},
		{name: "config and hash", args: []string{"--config", named, "--hash", "ketama", "--tag", "none", "a"}, code: 2,
			stderr: "drop --hash, --tag"},
		{name: "cluster config", args: []string{"--config", cluster, "a"}, code: 2, stderr: "use shardis slot"},
		{name: "bad config", args: []string{"--config", writeConfig(t, "shards: [{addr: '127.0.0.1:1', wieght: 2}]"), "a"}, code: 2,
			stderr: "unknown field shards[0].wieght (known: addr, name, weight, sentinel)"},
		{name: "neither", args: []string{"a"}, code: 2, stderr: "--shards is required (for example --shards 127.0.0.1:6379,127.0.0.1:6380), or --config FILE"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := locateRun(t, tc.stdin, append([]string{"locate"}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, errOut)
			}
			if out != tc.want {
				t.Errorf("output %q, want %q", out, tc.want)
			}
			if tc.stderr == "" && errOut != "" || !strings.Contains(errOut, tc.stderr) {
				t.Errorf("stderr %q, want %q", errOut, tc.stderr)
			}
		})
	}
	// The same servers without their names are another Jedis ring: the
	// file keeps the names that a retyped --shards list can lose.
	_, unnamed, _ := locateRun(t, "", "locate", "--hash", "jedis", "--shards",
		"127.0.0.1:6381:2,127.0.0.1:6382,127.0.0.1:6383,127.0.0.1:6384:5", "a", "b", "foo")
	if unnamed == "a\t2\tshard-c\nb\t1\tshard-b\nfoo\t3\tshard-d\n" {
		t.Error("unnamed shards placed like named ones; the test shows nothing")
	}
}

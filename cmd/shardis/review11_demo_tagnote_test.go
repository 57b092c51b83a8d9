package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
)

// The demo printed "(keys with the same {tag} always share a shard)" under
// its two {user:1000} keys whatever the configuration's tag rule was. With
// "tag: none" (the jedis default) the braces are not a tag: the two keys
// are placed independently, and a user reading the demo's output against
// their own servers was told the opposite — next to the two keys shown on
// different shards.
func TestReview11DemoTagNoteFollowsTheTagRule(t *testing.T) {
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	// Shard names under which the two keys land on different shards with
	// tag: none, so that the note would contradict the lines above it.
	var names []string
	for i := 0; i < 100 && names == nil; i++ {
		cand := []string{fmt.Sprintf("a%d", i), fmt.Sprintf("b%d", i), fmt.Sprintf("c%d", i)}
		var shards []ring.Shard
		for j, s := range servers {
			shards = append(shards, ring.Shard{Name: cand[j], Addr: s.Addr, Weight: 1})
		}
		r, err := ring.New(ring.Config{Algorithm: ring.Jedis, Tag: "none", Shards: shards})
		if err != nil {
			t.Fatal(err)
		}
		if r.Locate("{user:1000}.followers") != r.Locate("{user:1000}.following") {
			names = cand
		}
	}
	if names == nil {
		t.Fatal("no shard names among 100 that split the two keys")
	}
	for _, tt := range []struct {
		tag      string
		together bool
	}{
		{"none", false},
		{"cluster", true},
	} {
		t.Run(tt.tag, func(t *testing.T) {
			var b strings.Builder
			fmt.Fprintf(&b, "hash: jedis\ntag: %s\nshards:\n", tt.tag)
			for j, s := range servers {
				fmt.Fprintf(&b, "  - {addr: %q, name: %s}\n", s.Addr, names[j])
			}
			file := filepath.Join(t.TempDir(), "shardis.yaml")
			if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			env := &cliEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut}
			if code := run(context.Background(), env, []string{"demo", "--config", file, "--keys", "100", "--batch", "50"}); code != 0 {
				t.Fatalf("demo exit %d: %s", code, errOut.String())
			}
			text := out.String()
			claims := strings.Contains(text, "always share a shard")
			if claims != tt.together {
				t.Errorf("tag %s: the output claims tagged keys share a shard: %v, want %v\n%s", tt.tag, claims, tt.together, text)
			}
		})
	}
}

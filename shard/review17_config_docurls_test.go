package shard_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/shardis/shardis/shard"
)

// docURL finds the configuration URLs written in README.md and docs/*.md,
// up to the first character no such URL holds (white space, a quote, a
// backtick, a parenthesis).
var docURL = regexp.MustCompile("rediss?-(?:ring|cluster)(?:\\+sentinel)?://[^\\s`\"'()<>|]*")

// TestReview17DocumentedURLsParse parses every configuration URL that
// README.md and docs/*.md show: each parses, but the templates (the
// syntax lines, "…", a bare scheme) and the ones shown as errors, which
// must be refused.
func TestReview17DocumentedURLsParse(t *testing.T) {
	refused := map[string]bool{
		"redis-ring://SECRET@host:6379": true, // user info without ':'
		"redis-ring://h:6379/2":         true, // the database as a path
		"redis-ring://a:6379, b:6379":   true, // white space after a comma (read up to it above)
	}
	files, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../README.md")
	seen := map[string]bool{}
	parsed := 0
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range docURL.FindAllString(string(text), -1) {
			// A sentence's punctuation after the URL is not part of it.
			u = strings.TrimRight(u, ".,;:")
			if refused[u] || strings.HasSuffix(u, "://") || strings.Contains(u, "…") || strings.Contains(u, "[user") || seen[u] {
				continue
			}
			seen[u] = true
			if _, err := shard.ParseURL(u); err != nil {
				t.Errorf("%s: %s: %v", filepath.Base(f), u, err)
			}
			parsed++
		}
	}
	t.Logf("%d documented URLs parse", parsed)
	if parsed < 12 {
		t.Fatalf("parsed %d documented URLs, want a dozen at least: did the docs or the pattern change?", parsed)
	}
	for u := range refused {
		if _, err := shard.ParseURL(u); !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("%s: %v, want ErrBadConfig as the docs say", u, err)
		}
	}
}

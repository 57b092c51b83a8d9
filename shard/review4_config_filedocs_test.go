package shard_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/shard"
)

// A second YAML document (after ---) was never read: its settings, and
// its mistakes, were dropped without a word.
func TestReview4SecondYAMLDocumentIsRefused(t *testing.T) {
	for _, doc := range []string{
		"shards: [{addr: '127.0.0.1:6381'}]\n---\npool: {password: x}\n",
		"shards: [{addr: '127.0.0.1:6381'}]\n---\npool: {passwrd: x}\n",
	} {
		_, err := shard.ParseConfig([]byte(doc))
		if !errors.Is(err, shard.ErrBadConfig) || !strings.Contains(err.Error(), "document") {
			t.Errorf("ParseConfig(%q) = %v, want ErrBadConfig about the second document", doc, err)
		}
	}
	// A document start marker before the only document, an end marker
	// or an empty document after it, is still one document.
	for _, doc := range []string{
		"---\nshards: [{addr: '127.0.0.1:6381'}]\n",
		"shards: [{addr: '127.0.0.1:6381'}]\n...\n",
		"shards: [{addr: '127.0.0.1:6381'}]\n---\n",
	} {
		if _, err := shard.ParseConfig([]byte(doc)); err != nil {
			t.Errorf("ParseConfig(%q) = %v", doc, err)
		}
	}
}

package shard_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardis/shardis/shard"
)

// A migration.from_file that leads back to a file being read (the file
// itself, or a loop through other files) must be a configuration error,
// not endless recursion that overflows the stack and kills the process.
func TestReview4MigrationFromFileLoop(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "self.yaml")
	a := filepath.Join(dir, "a.yaml")
	b := filepath.Join(dir, "b.yaml")
	link := filepath.Join(dir, "link.yaml")
	files := map[string]string{
		self: "shards: [{addr: '127.0.0.1:6381'}]\nmigration: {from_file: '" + self + "'}\n",
		a:    "shards: [{addr: '127.0.0.1:6381'}]\nmigration: {from_file: '" + b + "'}\n",
		b:    "shards: [{addr: '127.0.0.1:6382'}]\nmigration: {from_file: '" + link + "'}\n",
	}
	for p, text := range files {
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(a, link); err != nil { // the loop closes under another name
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path string }{{"itself", self}, {"loop through a symlink", a}} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := shard.LoadConfig(tc.path)
			if !errors.Is(err, shard.ErrBadConfig) {
				t.Fatalf("LoadConfig(%s) = %v, want ErrBadConfig", tc.path, err)
			}
			if !strings.Contains(err.Error(), "from_file") {
				t.Fatalf("error %q does not name from_file", err)
			}
		})
	}
	// The same from bytes: ParseConfig's document names a file that loops.
	_, err := shard.ParseConfig([]byte("shards: [{addr: '127.0.0.1:6383'}]\nmigration: {from_file: '" + self + "'}\n"))
	if !errors.Is(err, shard.ErrBadConfig) || !strings.Contains(err.Error(), "from_file") {
		t.Fatalf("ParseConfig = %v, want ErrBadConfig naming from_file", err)
	}

	// A from_file that does not loop still loads, with the old placement.
	old := filepath.Join(dir, "old.yaml")
	if err := os.WriteFile(old, []byte("shards: [{addr: '127.0.0.1:6391', name: x}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := shard.ParseConfig([]byte("shards: [{addr: '127.0.0.1:6393', name: z}]\nmigration: {from_file: '" + old + "'}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Migration == nil || cfg.Migration.From == nil || len(cfg.Migration.From.Shards) != 1 || cfg.Migration.From.Shards[0].Name != "x" {
		t.Fatalf("migration from = %+v, want the one shard x of old.yaml", cfg.Migration)
	}
}

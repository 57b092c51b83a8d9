// Package shardis_test holds repository-wide checks: the Go programs in the
// documentation compile, the documented config files parse, and a module
// that imports the library keeps only the library's dependencies.
package shardis_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/shardis/shardis/shard"
)

// fence matches a fenced code block: its language and its text.
var fence = regexp.MustCompile("(?ms)^```([a-z]*)\n(.*?)^```")

type block struct {
	file string
	line int
	lang string
	text string
}

// docBlocks returns the fenced blocks of README.md and docs/*.md.
func docBlocks(t *testing.T) []block {
	t.Helper()
	files, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{"README.md"}, files...)
	var blocks []block
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range fence.FindAllSubmatchIndex(data, -1) {
			blocks = append(blocks, block{
				file: f,
				line: 1 + strings.Count(string(data[:m[0]]), "\n"),
				lang: string(data[m[2]:m[3]]),
				text: string(data[m[4]:m[5]]),
			})
		}
	}
	return blocks
}

// TestDocProgramsCompile type-checks and vets every Go block of README.md
// and docs/*.md that is a whole program: one whose first line is
// "package main". Other Go blocks are fragments and are not compiled.
func TestDocProgramsCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to compile the documentation's programs: %v", err)
	}
	var programs []block
	for _, b := range docBlocks(t) {
		if b.lang == "go" && strings.HasPrefix(strings.TrimSpace(b.text), "package main") {
			programs = append(programs, b)
		}
	}
	// The README's first example is a whole program; if the marker were
	// lost, this test would silently compile nothing.
	if len(programs) < 2 || programs[0].file != "README.md" {
		t.Fatalf("found %d programs (want the README's first example and docs/config.md's at least)", len(programs))
	}
	for _, p := range programs {
		name := strings.ReplaceAll(p.file, "/", "_")
		t.Run(name+":"+strconv.Itoa(p.line), func(t *testing.T) {
			dir := t.TempDir()
			src := filepath.Join(dir, "main.go")
			if err := os.WriteFile(src, []byte(p.text), 0o600); err != nil {
				t.Fatal(err)
			}
			// Run from the repository, so the program builds against this
			// checkout of the library.
			cmd := exec.Command(goCmd, "vet", src)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s:%d does not compile:\n%s", p.file, p.line, out)
			}
		})
	}
}

// TestDocConfigFilesParse parses every YAML and JSON block of docs/config.md,
// which are whole configuration files.
func TestDocConfigFilesParse(t *testing.T) {
	n := 0
	for _, b := range docBlocks(t) {
		if b.file != filepath.Join("docs", "config.md") || (b.lang != "yaml" && b.lang != "json") {
			continue
		}
		n++
		if _, err := shard.ParseConfig([]byte(b.text)); err != nil {
			t.Errorf("%s:%d: %v", b.file, b.line, err)
		}
	}
	if n < 2 {
		t.Fatalf("found %d config blocks in docs/config.md, want the YAML and the JSON one", n)
	}
}

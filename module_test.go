package shardis_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// libraryModules are the only modules a module that imports the library
// may find in its go.sum: redigo and the YAML parser, which the library
// uses, and the three modules the library's own tests use, whose checksums
// go mod tidy keeps for `go test all`.
var libraryModules = []string{
	"github.com/gomodule/redigo",
	"go.yaml.in/yaml/v3",
	"github.com/spaolacci/murmur3",
	"github.com/stretchr/testify",
	"go.uber.org/goleak",
}

// TestFreshModuleKeepsLibraryDependencies builds a new module that imports
// package shard (this checkout, through a replace directive) and runs go
// mod tidy: its go.sum must hold only the library's dependencies, never
// those of the shardis command (gonum/plot, miniredis, the PDF and font
// libraries).
func TestFreshModuleKeepsLibraryDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed: %v", err)
	}
	repo, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/user\n\ngo 1.26\n\nrequire github.com/shardis/shardis v0.0.0\n\nreplace github.com/shardis/shardis => " + repo + "\n",
		"main.go": `package main

import (
	"context"
	"fmt"

	"github.com/shardis/shardis/shard"
)

func main() {
	cfg, err := shard.ParseURL("redis-ring://127.0.0.1:6379")
	if err != nil {
		panic(err)
	}
	c, err := shard.New(context.Background(), cfg)
	fmt.Println(c, err)
}
`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(goCmd, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("mod", "tidy")
	run("build", "-o", os.DevNull, ".")

	sum, err := os.ReadFile(filepath.Join(dir, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	var mods []string
	for line := range strings.Lines(string(sum)) {
		if f := strings.Fields(line); len(f) == 3 && !slices.Contains(mods, f[0]) {
			mods = append(mods, f[0])
		}
	}
	if !slices.Contains(mods, "github.com/gomodule/redigo") {
		t.Fatalf("go.sum lacks redigo, so the module did not build against the library:\n%s", sum)
	}
	for _, m := range mods {
		if !slices.Contains(libraryModules, m) {
			t.Errorf("go.sum of a module importing only package shard holds %s", m)
		}
	}
	if t.Failed() {
		t.Logf("go.sum:\n%s", sum)
	}
}

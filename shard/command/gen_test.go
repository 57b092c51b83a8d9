package command

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
)

// TestGeneratedTableIsCurrent runs the generator against the installed
// redis-server into a temporary file and requires exactly the committed
// commands_gen.go.
func TestGeneratedTableIsCurrent(t *testing.T) {
	redistest.Require(t)
	server, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal(err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to run the generator: %v", err)
	}
	out := filepath.Join(t.TempDir(), "commands_gen.go")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "run", "./internal/gen", "-o", out, "-server", server)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generator: %v\n%s", err, msg)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("commands_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("regenerated table differs from commands_gen.go (run go generate): %s", firstDiff(want, got))
	}
	if !strings.HasPrefix(string(got), "// Code generated ") || !strings.Contains(string(got), "DO NOT EDIT.\n") ||
		!strings.Contains(string(got), "Redis "+RedisVersion) {
		t.Error("generated file lacks the generated-code header naming the Redis version")
	}
}

// firstDiff describes the first line where a and b differ.
func firstDiff(a, b []byte) string {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := 0; i < len(la) || i < len(lb); i++ {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			return fmt.Sprintf("line %d: committed %q, regenerated %q", i+1, x, y)
		}
	}
	return "same lines, different bytes"
}

package shardis_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/shardis/shardis/shard"
)

// The Go blocks of the documentation that are not whole programs are
// fragments: a few statements that use names the text has introduced
// (ctx, client, cfg, ...). TestDocFragmentsTypeCheck puts each into a
// function that declares those names and type-checks it against this
// checkout, so a renamed field, option or function in a fragment fails
// here instead of in a reader's editor. Unused variables and imports are
// allowed: a fragment shows a call, not what the caller does next.

// fragmentName is a name a fragment may use without declaring it.
type fragmentName struct {
	decl    string // the declaration's type
	imports []string
}

var fragmentNames = map[string]fragmentName{
	"ctx":    {"context.Context", []string{"context"}},
	"client": {"*shard.Client", []string{"github.com/shardis/shardis/shard"}},
	"cfg":    {"shard.Config", []string{"github.com/shardis/shardis/shard"}},
	"key":    {"string", nil},
	"tp":     {"trace.TracerProvider", []string{"go.opentelemetry.io/otel/trace"}},
	"mp":     {"metric.MeterProvider", []string{"go.opentelemetry.io/otel/metric"}},
}

// fragmentImports are the packages a fragment may use without importing.
var fragmentImports = []string{
	"context", "errors", "log", "net/http", "os", "time",
	"github.com/gomodule/redigo/redis",
	"github.com/shardis/shardis/pool",
	"github.com/shardis/shardis/ring",
	"github.com/shardis/shardis/shard",
}

var (
	fragmentImportBlock = regexp.MustCompile(`(?ms)\Aimport \((.*?)\n\)\n`)
	fragmentEllipsis    = regexp.MustCompile(`(?m)^\s*\.\.\.\s*$|\{ \.\.\. \}`)
	quoted              = regexp.MustCompile(`"([^"]+)"`)
)

// fragmentSource wraps a fragment into a file, returning the file and the
// directory of the module it builds in (an extra/ module when it imports one).
func fragmentSource(text string) (src string, imports []string, moduleDir string) {
	own := map[string]bool{}
	if m := fragmentImportBlock.FindStringSubmatch(text); m != nil {
		for _, q := range quoted.FindAllStringSubmatch(m[1], -1) {
			own[q[1]] = true
		}
		text = text[len(m[0]):]
	}
	moduleDir = "."
	for p := range own {
		if rest, ok := strings.CutPrefix(p, "github.com/shardis/shardis/extra/"); ok {
			moduleDir = filepath.Join("extra", strings.Split(rest, "/")[0])
		}
	}
	body := fragmentEllipsis.ReplaceAllStringFunc(text, func(s string) string {
		if strings.HasPrefix(strings.TrimSpace(s), "{") {
			return "{}"
		}
		return ""
	})
	var decls []string
	want := map[string]bool{}
	for p := range own {
		want[p] = true
	}
	for _, p := range fragmentImports {
		want[p] = true
	}
	for name, fn := range fragmentNames {
		used := regexp.MustCompile(`\b` + name + `\b`).MatchString(body)
		declared := regexp.MustCompile(`(?m)^\s*(\w+\s*,\s*)*` + name + `\s*(,\s*\w+\s*)*:=`).MatchString(body)
		if used && !declared {
			decls = append(decls, fmt.Sprintf("var %s %s", name, fn.decl))
			for _, p := range fn.imports {
				want[p] = true
			}
		}
	}
	var b strings.Builder
	b.WriteString("package fragment\n\nimport (\n")
	for p := range want {
		fmt.Fprintf(&b, "\t%q\n", p)
		imports = append(imports, p)
	}
	b.WriteString(")\n\nfunc _() error {\n")
	for _, d := range decls {
		b.WriteString(d + "\n")
	}
	b.WriteString(body)
	b.WriteString("\nreturn nil\n}\n")
	return b.String(), imports, moduleDir
}

// exportImporter imports packages from the export data "go list -export"
// reports, built in one module directory.
func exportImporter(t *testing.T, fset *token.FileSet, dir string, pkgs []string) types.Importer {
	t.Helper()
	args := append([]string{"list", "-e", "-export", "-deps", "-json=ImportPath,Export,Error"}, pkgs...)
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list in %s: %v\n%s", dir, err, stderr.String())
	}
	exports := map[string]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath, Export string
			Error              *struct{ Err string }
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if p.Error != nil {
			t.Errorf("%s: package %s: %s", dir, p.ImportPath, p.Error.Err)
		}
		exports[p.ImportPath] = p.Export
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %s in %s", path, dir)
		}
		return os.Open(f)
	})
}

func TestDocFragmentsTypeCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	type fragment struct {
		b         block
		src       string
		moduleDir string
	}
	var fragments []fragment
	imports := map[string]map[string]bool{}
	for _, b := range docBlocks(t) {
		if b.lang != "go" || strings.HasPrefix(strings.TrimSpace(b.text), "package main") {
			continue
		}
		src, imps, dir := fragmentSource(b.text)
		fragments = append(fragments, fragment{b, src, dir})
		if imports[dir] == nil {
			imports[dir] = map[string]bool{}
		}
		for _, p := range imps {
			imports[dir][p] = true
		}
	}
	// README.md has four fragments and docs/ a dozen; finding far fewer
	// means the block syntax changed and this test checks nothing.
	if len(fragments) < 10 {
		t.Fatalf("found %d Go fragments in the documentation, want at least 10", len(fragments))
	}
	fset := token.NewFileSet()
	importers := map[string]types.Importer{}
	for dir, set := range imports {
		var pkgs []string
		for p := range set {
			pkgs = append(pkgs, p)
		}
		importers[dir] = exportImporter(t, fset, dir, pkgs)
	}
	for _, f := range fragments {
		name := f.b.file + ":" + strconv.Itoa(f.b.line)
		t.Run(strings.ReplaceAll(name, "/", "_"), func(t *testing.T) {
			file, err := parser.ParseFile(fset, name, f.src, parser.SkipObjectResolution)
			if err != nil {
				t.Fatalf("%s does not parse as statements: %v\n%s", name, err, f.src)
			}
			var problems []string
			conf := types.Config{
				Importer: importers[f.moduleDir],
				Error: func(err error) {
					msg := err.Error()
					if strings.Contains(msg, "declared and not used") || strings.Contains(msg, "imported and not used") {
						return
					}
					problems = append(problems, msg)
				},
			}
			_, _ = conf.Check("fragment", fset, []*ast.File{file}, nil)
			if len(problems) > 0 {
				t.Errorf("%s does not type-check against the current API:\n%s\n--- as checked:\n%s",
					name, strings.Join(problems, "\n"), f.src)
			}
		})
	}
}

// TestDocConfigFilesEverywhereParse parses every YAML and JSON block of
// README.md and docs/*.md as a configuration file (TestDocConfigFilesParse
// covers docs/config.md alone). A block written as two files side by side
// ("# before" and "# after" columns) is parsed as both files.
func TestDocConfigFilesEverywhereParse(t *testing.T) {
	t.Setenv("REDIS_PASSWORD", "x")
	t.Setenv("SENTINEL_PASSWORD", "y")
	n := 0
	for _, b := range docBlocks(t) {
		if b.lang != "yaml" && b.lang != "json" {
			continue
		}
		files := []string{b.text}
		first, _, _ := strings.Cut(b.text, "\n")
		if col := strings.Index(first, "# after"); strings.HasPrefix(first, "# before") && col > 0 {
			var left, right strings.Builder
			for _, line := range strings.Split(b.text, "\n") {
				if len(line) > col {
					left.WriteString(line[:col] + "\n")
					right.WriteString(line[col:] + "\n")
				} else {
					left.WriteString(line + "\n")
				}
			}
			files = []string{left.String(), right.String()}
		}
		for i, f := range files {
			n++
			if _, err := shard.ParseConfig([]byte(f)); err != nil {
				t.Errorf("%s:%d (file %d of the block): %v\n%s", b.file, b.line, i+1, err, f)
			}
		}
	}
	// README.md, cluster.md (two), config.md (three), resharding.md (two)
	// and sentinel.md hold nine files.
	if n < 9 {
		t.Fatalf("found %d configuration files in the documentation, want at least 9", n)
	}
}

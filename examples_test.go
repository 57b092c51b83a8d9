package shardis_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEveryExportedIdentifierHasAnExample holds the library's packages to
// their promise that a newcomer can learn every exported identifier from a
// runnable example: each one is named in an Example function of its
// package (or is the subject of one, ExampleT_M), or is reachable from
// one. Reachable means: a type in the signature of a covered function or
// method, or in a field of a covered struct; a method that fmt or errors
// call by themselves (Error, String, Unwrap, Is, GoString) of a covered
// type; a constant or variable of a covered type of its own package.
func TestEveryExportedIdentifierHasAnExample(t *testing.T) {
	for _, dir := range []string{"shard", "ring", "cluster", "hashtag", "pool"} {
		t.Run(dir, func(t *testing.T) {
			for _, m := range uncoveredIdentifiers(t, dir) {
				t.Errorf("%s.%s has no example and is not reachable from one", dir, m)
			}
		})
	}
}

// decl is one exported identifier: a type, a function, a method (Recv
// set), a constant or a variable.
type decl struct {
	name    string // "F", "T", "T.M", "C"
	recv    string // the receiver type of a method
	typ     string // the declared type of a constant or variable, when a local type
	refs    []string
	method  string
	isType  bool
	isValue bool
}

// uncoveredIdentifiers returns the exported identifiers of dir that no
// example reaches.
func uncoveredIdentifiers(t *testing.T, dir string) (missing []string) {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	var decls []decl
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, "_test.go") {
			collectExampleUses(f, used)
			continue
		}
		decls = append(decls, exportedDecls(f)...)
	}
	covered := map[string]bool{}
	for _, d := range decls {
		if used[d.name] || (d.method != "" && used[d.method]) {
			covered[d.name] = true
		}
	}
	implicit := []string{"Error", "String", "GoString", "Format", "Unwrap", "Is", "As"}
	for changed := true; changed; {
		changed = false
		mark := func(name string) {
			if !covered[name] {
				covered[name] = true
				changed = true
			}
		}
		for _, d := range decls {
			switch {
			case covered[d.name] && !d.isValue:
				for _, r := range d.refs {
					mark(r) // types in its signature or fields
				}
			case d.recv != "" && covered[d.recv] && slices.Contains(implicit, d.method):
				mark(d.name)
			case d.isValue && d.typ != "" && covered[d.typ]:
				mark(d.name)
			}
		}
	}
	for _, d := range decls {
		if !covered[d.name] {
			missing = append(missing, d.name)
		}
	}
	slices.Sort(missing)
	return slices.Compact(missing)
}

// collectExampleUses records the names an Example function mentions, and
// the identifiers its own name says it shows (ExampleT_M: T, M and T.M).
func collectExampleUses(f *ast.File, used map[string]bool) {
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Example") {
			continue
		}
		subject := strings.TrimPrefix(fn.Name.Name, "Example")
		parts := strings.Split(subject, "_")
		if len(parts) > 0 && parts[0] != "" {
			used[parts[0]] = true
			if len(parts) > 1 && parts[1] != "" && parts[1][0] >= 'A' && parts[1][0] <= 'Z' {
				used[parts[0]+"."+parts[1]] = true
				used[parts[1]] = true
			}
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.SelectorExpr:
				used[x.Sel.Name] = true
			case *ast.Ident:
				used[x.Name] = true
			case *ast.KeyValueExpr:
				if k, ok := x.Key.(*ast.Ident); ok {
					used[k.Name] = true
				}
			}
			return true
		})
	}
}

// exportedDecls lists the exported identifiers of a non-test file.
func exportedDecls(f *ast.File) []decl {
	var out []decl
	for _, d := range f.Decls {
		switch x := d.(type) {
		case *ast.FuncDecl:
			if !x.Name.IsExported() {
				continue
			}
			dd := decl{name: x.Name.Name, refs: typeNames(x.Type)}
			if x.Recv != nil && len(x.Recv.List) == 1 {
				recv := baseType(x.Recv.List[0].Type)
				if recv == "" || !ast.IsExported(recv) {
					continue
				}
				dd = decl{name: recv + "." + x.Name.Name, recv: recv, method: x.Name.Name, refs: typeNames(x.Type)}
			}
			out = append(out, dd)
		case *ast.GenDecl:
			var groupType string
			for _, s := range x.Specs {
				switch sp := s.(type) {
				case *ast.TypeSpec:
					if sp.Name.IsExported() {
						out = append(out, decl{name: sp.Name.Name, isType: true, refs: typeNames(sp.Type)})
					}
				case *ast.ValueSpec:
					if sp.Type != nil {
						groupType = baseType(sp.Type)
					}
					for _, n := range sp.Names {
						if n.IsExported() {
							out = append(out, decl{name: n.Name, isValue: true, typ: groupType})
						}
					}
				}
			}
		}
	}
	return out
}

// typeNames returns the exported local type names an expression mentions.
func typeNames(e ast.Node) []string {
	var names []string
	ast.Inspect(e, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SelectorExpr:
			return false // another package's type
		case *ast.Ident:
			if x.IsExported() {
				names = append(names, x.Name)
			}
		}
		return true
	})
	return names
}

// baseType is the local type name of a receiver or value type: T for T,
// *T, T[P].
func baseType(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return baseType(x.X)
	case *ast.IndexExpr:
		return baseType(x.X)
	case *ast.Ident:
		return x.Name
	}
	return ""
}

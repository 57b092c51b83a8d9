package shard

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/shardis/shardis/internal/addrkey"
	"go.yaml.in/yaml/v3"
)

// checkFields walks a parsed YAML (or JSON) document against the type it
// will be decoded into and reports the first mapping key that the type has
// no field for, by its dotted path and the names that would be accepted:
//
//	line 7: unknown field health.failurelimit (known: interval, failure_limit, timeout, auto_eject)
//
// The known names come from the yaml struct tags, so a field added to the
// file format is known here without further work.
func checkFields(n *yaml.Node, t reflect.Type, path string) error {
	return (&fieldChecker{seen: map[aliasUse]bool{}}).check(n, t, path)
}

// fieldChecker is checkFields' walk. It follows an alias of a mapping or
// a list once per anchor and type (seen): its fields are checked where it
// is used, named by that path (health.max_idle for "health: *pool"),
// and a document of aliases of aliases takes time linear in its size,
// not exponential.
type fieldChecker struct{ seen map[aliasUse]bool }

// aliasUse is an anchored node checked as a type.
type aliasUse struct {
	anchor *yaml.Node
	t      reflect.Type
}

// check checks n as t, the field at path; its errors are FieldErrors
// of the deepest field they concern.
func (w *fieldChecker) check(n *yaml.Node, t reflect.Type, path string) error {
	return atField(path, w.checkNode(n, t, path))
}

func (w *fieldChecker) checkNode(n *yaml.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if err := w.check(c, t, path); err != nil {
				return err
			}
		}
	case yaml.MappingNode:
		if t.Kind() == reflect.Map {
			for i := 0; i+1 < len(n.Content); i += 2 {
				key := fmt.Sprintf("%s[%q]", path, addrkey.Redact(n.Content[i].Value))
				if err := w.check(n.Content[i+1], t.Elem(), key); err != nil {
					return err
				}
			}
			return nil
		}
		if t.Kind() != reflect.Struct {
			return shapeError(n, t, path)
		}
		names, fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.ScalarNode && k.Value == "<<" {
				// A merge key: the mappings it merges in, aliased or not,
				// are checked as this one.
				merged := []*yaml.Node{v}
				if v.Kind == yaml.SequenceNode {
					merged = v.Content
				}
				for _, m := range merged {
					if m.Kind == yaml.MappingNode || (m.Kind == yaml.AliasNode && m.Alias != nil && m.Alias.Kind == yaml.MappingNode) {
						if err := w.check(m, t, path); err != nil {
							return err
						}
					}
				}
				continue
			}
			name := k.Value
			if k.Kind == yaml.AliasNode && k.Alias != nil && k.Alias.Kind == yaml.ScalarNode {
				name = k.Alias.Value // an alias names the field by its anchor's value
			} else if k.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: %s: a key here is a field name (%s), not a list or a mapping",
					k.Line, orFile(path), strings.Join(names, ", "))
			}
			f, ok := fields[name]
			if !ok {
				return atField(joinPath(path, name), fmt.Errorf("line %d: unknown field %s (known: %s)", k.Line, joinPath(path, name), strings.Join(names, ", ")))
			}
			if err := w.check(v, f.Type, joinPath(path, name)); err != nil {
				return err
			}
		}
	case yaml.ScalarNode:
		// A value of the wrong kind, named by its path (the decoder's own
		// error has only the line, which in JSON is often line 1).
		if err := checkTagged(n, path); err != nil {
			return err
		}
		switch {
		case n.Tag == "!!null":
		case t.Kind() == reflect.Struct || t.Kind() == reflect.Slice || t.Kind() == reflect.Map:
			return shapeError(n, t, path)
		case t == reflect.TypeFor[duration]():
			if _, err := time.ParseDuration(n.Value); err != nil {
				return fmt.Errorf("line %d: %s: %q is not a duration such as 500ms or 3s", n.Line, path, n.Value)
			}
		case t == reflect.TypeFor[neverDuration]():
			if _, err := time.ParseDuration(n.Value); err != nil && n.Value != neverWord {
				return fmt.Errorf("line %d: %s: %q is not a duration such as 500ms or 3s, nor never", n.Line, path, n.Value)
			}
		case t.Kind() == reflect.Int:
			return checkWholeNumber(n, path)
		case t.Kind() == reflect.Bool:
			return checkBool(n, path)
		}
	case yaml.AliasNode:
		// An alias is checked as its value where it is used (anchored on
		// a string field, 1.5 would pass there; a mapping anchored under
		// pool holds fields that health has not); a collection once per
		// anchor and type.
		a := n.Alias
		if a == nil {
			break
		}
		if a.Kind == yaml.ScalarNode {
			return w.check(a, t, path)
		}
		if k := (aliasUse{a, t}); !w.seen[k] {
			w.seen[k] = true
			return w.check(a, t, path)
		}
	case yaml.SequenceNode:
		if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
			return shapeError(n, t, path)
		}
		for i, c := range n.Content {
			if err := w.check(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkTagged refuses a scalar whose explicit tag (password: !!int x)
// does not fit its value, named by its path: the decoder's own error has
// no line nor field, and quotes the value, which may be a password.
func checkTagged(n *yaml.Node, path string) error {
	if n.Style&yaml.TaggedStyle == 0 {
		return nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return fmt.Errorf("line %d: %s: the value is not a %s, as its tag says (not quoted, as it may be a password)", n.Line, path, n.ShortTag())
	}
	return nil
}

// octalLooking matches a YAML integer with a leading zero, which YAML
// reads as octal (010 is 8).
var octalLooking = regexp.MustCompile(`^[-+]?0[0-9_]+$`)

// checkWholeNumber refuses, for an integer field, what the decoder would
// take and change without a word: a number with a fraction (it drops the
// fraction: weight 1.5 would be 1) and a decimal-looking number with a
// leading zero (read as octal). A whole number written as a float (2.0,
// 1e1, JSON's 3.0) is its value.
func checkWholeNumber(n *yaml.Node, path string) error {
	switch n.Tag {
	case "!!int":
		if octalLooking.MatchString(n.Value) {
			return fmt.Errorf("line %d: %s: %q has a leading zero, which YAML reads as octal: write it without (or as 0o%s for octal)",
				n.Line, path, n.Value, strings.TrimLeft(strings.TrimLeft(n.Value, "+-"), "0_"))
		}
		// Beyond an int the decoder refuses it with the start of the
		// value and no field name.
		if _, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, strconv.IntSize); err != nil {
			return fmt.Errorf("line %d: %s: %q is not a valid int (out of range)", n.Line, path, n.Value)
		}
		return nil
	case "!!float":
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		if err == nil && f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
			return nil
		}
		return fmt.Errorf("line %d: %s: %q is not a whole number", n.Line, path, n.Value)
	}
	return fmt.Errorf("line %d: %s: %q is not a valid int", n.Line, path, n.Value)
}

// yamlBools are the words the decoder takes for a bool besides YAML 1.2's
// true and false (YAML 1.1's, which it still reads).
var yamlBools = map[string]bool{"y": true, "yes": true, "on": true, "n": true, "no": true, "off": true}

// checkBool refuses, for a bool field, a value the decoder would refuse
// without naming the field ("true" quoted, 0, 1): named by its path.
func checkBool(n *yaml.Node, path string) error {
	if n.Tag == "!!bool" || (n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0 && yamlBools[strings.ToLower(n.Value)]) {
		return nil
	}
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		return fmt.Errorf("line %d: %s: want true or false, not the quoted string %q", n.Line, path, n.Value)
	}
	return fmt.Errorf("line %d: %s: %q is not true or false", n.Line, path, n.Value)
}

// yamlFields returns the yaml names of t's fields in declaration order,
// and the fields by name.
func yamlFields(t reflect.Type) ([]string, map[string]reflect.StructField) {
	var names []string
	fields := make(map[string]reflect.StructField)
	for f := range t.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && strings.Contains(","+opts+",", ",inline,") {
			// An inlined struct's fields belong to the mapping around it.
			inNames, inFields := yamlFields(f.Type)
			names = append(names, inNames...)
			for k, v := range inFields {
				fields[k] = v
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		names = append(names, name)
		fields[name] = f
	}
	return names, fields
}

// shapeError reports a value whose shape (mapping, list, single value)
// is not the one its field takes, by the field's path and in the file's
// terms; the decoder's own error names Go types ("struct { Addr string
// ... }", "shard.Mode") and quotes the start of the value, which in the
// wrong place may be a password. This one quotes nothing.
func shapeError(n *yaml.Node, t reflect.Type, path string) error {
	want := "a single value"
	switch t.Kind() {
	case reflect.Struct:
		names, _ := yamlFields(t)
		want = "a mapping of its fields (" + strings.Join(names, ", ") + ")"
	case reflect.Map:
		want = "a mapping"
	case reflect.Slice, reflect.Array:
		want = "a list"
	}
	got := "a single value"
	switch n.Kind {
	case yaml.MappingNode:
		got = "a mapping"
	case yaml.SequenceNode:
		got = "a list"
	}
	return fmt.Errorf("line %d: %s: want %s, not %s", n.Line, orFile(path), want, got)
}

// orFile is path, or "the file" for the top level.
func orFile(path string) string {
	if path == "" {
		return "the file"
	}
	return path
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

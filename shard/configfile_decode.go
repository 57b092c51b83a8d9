package shard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// decodeFile decodes a configuration file, YAML or JSON, into a fileConfig.
// Its errors say what is wrong in the file's own terms: "line 7: unknown
// field health.failurelimit (known: ...)", "the file is empty", "JSON: ...".
func decodeFile(data []byte) (fileConfig, error) {
	var fc fileConfig
	trimmed := bytes.TrimSpace(data)
	isJSON := len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[')
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		if isJSON {
			// JSON is read as YAML, but a JSON file's syntax error is best
			// told by a JSON parser.
			var v any
			if jerr := json.Unmarshal(trimmed, &v); jerr != nil {
				return fc, badConfigf("JSON: %s", jsonErrorText(data, jerr))
			}
		}
		return fc, badConfigf("%s", yamlErrorText(err, isJSON))
	}
	if doc.Kind == 0 || len(doc.Content) == 0 || (doc.Content[0].Kind == yaml.ScalarNode && doc.Content[0].Tag == "!!null") {
		return fc, badConfigf("the file is empty (want YAML or JSON naming shards, seeds or a url)")
	}
	if root := doc.Content[0]; root.Kind != yaml.MappingNode {
		return fc, badConfigf("line %d: the file must hold a mapping of fields (mode, shards, seeds, pool, ...), not a %s", root.Line, nodeKind(root))
	}
	if err := checkFields(&doc, reflect.TypeFor[fileConfig](), ""); err != nil {
		return fc, badConfigf("%w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&fc); err != nil && !errors.Is(err, io.EOF) {
		return fc, badConfigf("%s", yamlErrorText(err, isJSON))
	}
	// The decoder reads one document: another one after "---" would be
	// dropped, settings and mistakes alike.
	var next yaml.Node
	if err := dec.Decode(&next); err == nil && len(next.Content) > 0 && !isNull(next.Content[0]) {
		return fc, badConfigf("line %d: a second YAML document (after ---): put every setting in one document", next.Content[0].Line)
	} else if err != nil && !errors.Is(err, io.EOF) {
		return fc, badConfigf("%s", yamlErrorText(err, isJSON))
	}
	nullKeysOn(doc.Content[0], &fc)
	return fc, nil
}

// nullKeysOn turns TLS on for every tls key given with no value (YAML
// null: "tls:" with nothing after it), which the decoder leaves nil:
// present, even empty, a tls key turns TLS on. So do a shard's sentinel
// key (a Sentinel shard with the shared settings) and the migration key
// (which then asks for its from or from_file rather than being dropped,
// its from commented out, leaving the client to look for keys in the new
// topology alone).
func nullKeysOn(root *yaml.Node, fc *fileConfig) {
	if fc.Migration == nil && isNull(mapValue(root, "migration")) {
		fc.Migration = &fileMigration{}
	}
	on := func(section *yaml.Node, dst **fileTLS) {
		if *dst == nil && isNull(mapValue(section, "tls")) {
			*dst = &fileTLS{}
		}
	}
	on(mapValue(root, "pool"), &fc.Pool.TLS)
	on(mapValue(root, "sentinel"), &fc.Sentinel.TLS)
	if shards := mapValue(root, "shards"); shards != nil && shards.Kind == yaml.SequenceNode && len(shards.Content) == len(fc.Shards) {
		for i, s := range shards.Content {
			if fc.Shards[i].Sentinel == nil && isNull(mapValue(s, "sentinel")) {
				fc.Shards[i].Sentinel = &fileSentinelShard{}
			}
			if fc.Shards[i].Sentinel != nil {
				on(mapValue(s, "sentinel"), &fc.Shards[i].Sentinel.TLS)
			}
		}
	}
}

// mapValue returns the value of key in mapping n (nil when n is not a
// mapping or has no such key).
func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// isNull reports a YAML null value ("", ~ or null).
func isNull(n *yaml.Node) bool {
	return n != nil && n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// yamlTypeError matches the YAML library's "cannot unmarshal !!str `x` into int".
var yamlTypeError = regexp.MustCompile("cannot unmarshal !!\\w+ `(.*)` into (\\S+)")

// yamlUnknownField matches the YAML library's "field x not found in type
// struct { ... }", for a field that checkFields could not see (behind an
// alias): the Go type means nothing to the file's author.
var yamlUnknownField = regexp.MustCompile(`field (\S+) not found in type .*`)

// yamlErrorText is a YAML library error without its "yaml: " labels, and
// with its lines joined, since the input may be JSON.
func yamlErrorText(err error, isJSON bool) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs := make([]string, len(te.Errors))
		for i, m := range te.Errors {
			m = yamlTypeError.ReplaceAllString(m, "\"$1\" is not a valid $2")
			msgs[i] = yamlUnknownField.ReplaceAllString(m, "unknown field $1")
		}
		return strings.Join(msgs, "; ")
	}
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	if isJSON {
		return "JSON: " + s
	}
	return s
}

// jsonErrorText turns a JSON syntax error's byte offset into a line.
func jsonErrorText(data []byte, err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off := int(se.Offset)
		lead := len(data) - len(bytes.TrimLeft(data, " \t\r\n"))
		line := 1 + bytes.Count(data[:min(len(data), lead+off)], []byte("\n"))
		return fmt.Sprintf("line %d: %v", line, se)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of input"
	}
	return err.Error()
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "single value"
	}
	return "non-mapping"
}

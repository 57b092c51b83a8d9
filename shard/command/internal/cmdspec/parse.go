package cmdspec

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/gomodule/redigo/redis"
)

// Fetch asks the server behind conn for its version and its COMMAND
// reply and returns the commands sorted by name, subcommands included.
func Fetch(ctx context.Context, conn redis.Conn) (version string, cmds []Command, err error) {
	info, err := redis.String(redis.DoContext(conn, ctx, "INFO", "server"))
	if err != nil {
		return "", nil, fmt.Errorf("cmdspec: INFO server: %w", err)
	}
	version = infoField(info, "redis_version")
	if version == "" {
		return "", nil, errors.New("cmdspec: INFO server has no redis_version")
	}
	reply, err := redis.Values(redis.DoContext(conn, ctx, "COMMAND"))
	if err != nil {
		return "", nil, fmt.Errorf("cmdspec: COMMAND: %w", err)
	}
	cmds, err = ParseCommands(reply)
	if err != nil {
		return "", nil, err
	}
	return version, cmds, nil
}

// ParseCommands turns a COMMAND reply (as redigo returns it) into
// commands sorted by name, each with its subcommands sorted by name.
func ParseCommands(reply []any) ([]Command, error) {
	cmds := make([]Command, 0, len(reply))
	for i, raw := range reply {
		c, err := parseCommand(raw)
		if err != nil {
			return nil, fmt.Errorf("cmdspec: COMMAND entry %d: %w", i, err)
		}
		cmds = append(cmds, c)
	}
	sortCommands(cmds)
	for i := 1; i < len(cmds); i++ {
		if cmds[i].Name == cmds[i-1].Name {
			return nil, fmt.Errorf("cmdspec: command %q listed twice", cmds[i].Name)
		}
	}
	return cmds, nil
}

// ParseCommand turns one entry of a COMMAND or COMMAND INFO reply (as
// redigo returns it) into a command, its subcommands sorted by name. Its
// error says what is wrong with the entry in the reply's terms, without
// a prefix: the caller's error names the reply.
func ParseCommand(raw any) (Command, error) {
	c, err := parseCommand(raw)
	if err != nil {
		return Command{}, err
	}
	sortCommands(c.Subcommands)
	return c, nil
}

func sortCommands(cmds []Command) {
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].Name < cmds[j].Name })
	for i := range cmds {
		sortCommands(cmds[i].Subcommands)
	}
}

func infoField(info, field string) string {
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && k == field {
			return v
		}
	}
	return ""
}

// parseCommand reads [name, arity, flags, first, last, step, acl-categories,
// tips, key-specs, subcommands].
func parseCommand(raw any) (Command, error) {
	var c Command
	e, ok := raw.([]any)
	if !ok {
		return c, fmt.Errorf("the entry is %s, not an array", describe(raw))
	}
	if len(e) < 10 {
		// Redis 6 sends 7 elements, Redis 5 and older 6.
		return c, fmt.Errorf("the entry is an array of %d elements, not the 10 of Redis 7 and later (a server older than Redis 7?)", len(e))
	}
	var err error
	if c.Name, err = text(e[0]); err != nil {
		return c, fmt.Errorf("name: %w", err)
	}
	c.Name = strings.ToLower(c.Name)
	fail := func(what string, err error) (Command, error) {
		return c, fmt.Errorf("%s: %s: %w", c.Name, what, err)
	}
	if c.Arity, err = integer(e[1]); err != nil {
		return fail("arity", err)
	}
	if c.Flags, err = texts(e[2]); err != nil {
		return fail("flags", err)
	}
	if c.FirstKey, err = integer(e[3]); err != nil {
		return fail("first key", err)
	}
	if c.LastKey, err = integer(e[4]); err != nil {
		return fail("last key", err)
	}
	if c.Step, err = integer(e[5]); err != nil {
		return fail("step", err)
	}
	if c.ACLCategories, err = texts(e[6]); err != nil {
		return fail("acl categories", err)
	}
	if c.Tips, err = texts(e[7]); err != nil {
		return fail("tips", err)
	}
	specs, ok := e[8].([]any)
	if !ok {
		return fail("key specs", fmt.Errorf("not an array: %s", describe(e[8])))
	}
	for i, s := range specs {
		ks, err := parseKeySpec(s)
		if err != nil {
			return fail(fmt.Sprintf("key spec %d", i), err)
		}
		c.KeySpecs = append(c.KeySpecs, ks)
	}
	subs, ok := e[9].([]any)
	if !ok {
		return fail("subcommands", fmt.Errorf("not an array: %s", describe(e[9])))
	}
	for _, s := range subs {
		sc, err := parseCommand(s)
		if err != nil {
			return fail("subcommand", err)
		}
		if len(sc.Subcommands) > 0 {
			return fail(sc.Name, errors.New("subcommand has subcommands"))
		}
		c.Subcommands = append(c.Subcommands, sc)
	}
	return c, nil
}

// parseKeySpec reads a key spec map: flags, begin_search, find_keys (and
// notes, which are ignored).
func parseKeySpec(raw any) (KeySpec, error) {
	var ks KeySpec
	m, err := pairs(raw)
	if err != nil {
		return ks, err
	}
	for k, v := range m {
		switch k {
		case "flags":
			if ks.Flags, err = texts(v); err != nil {
				return ks, fmt.Errorf("flags: %w", err)
			}
		case "begin_search":
			if err = parseBegin(v, &ks); err != nil {
				return ks, fmt.Errorf("begin_search: %w", err)
			}
		case "find_keys":
			if err = parseFind(v, &ks); err != nil {
				return ks, fmt.Errorf("find_keys: %w", err)
			}
		case "notes":
		default:
			return ks, fmt.Errorf("unexpected field %q", k)
		}
	}
	if ks.Begin == "" || ks.Find == "" {
		return ks, errors.New("begin_search or find_keys missing")
	}
	return ks, nil
}

func parseBegin(raw any, ks *KeySpec) error {
	typ, spec, err := typed(raw)
	if err != nil {
		return err
	}
	ks.Begin = typ
	switch typ {
	case "index":
		ks.Index, err = field(spec, "index")
		if err == nil && ks.Index < 1 {
			err = fmt.Errorf("index %d below 1", ks.Index)
		}
	case "keyword":
		ks.Keyword, err = textField(spec, "keyword")
		if err == nil {
			ks.StartFrom, err = field(spec, "startfrom")
		}
		if err == nil && (ks.Keyword == "" || ks.StartFrom == 0) {
			err = fmt.Errorf("keyword %q startfrom %d", ks.Keyword, ks.StartFrom)
		}
	case "unknown":
	default:
		err = fmt.Errorf("unexpected type %q", typ)
	}
	return err
}

func parseFind(raw any, ks *KeySpec) error {
	typ, spec, err := typed(raw)
	if err != nil {
		return err
	}
	ks.Find = typ
	switch typ {
	case "range":
		if ks.LastKey, err = field(spec, "lastkey"); err != nil {
			return err
		}
		if ks.KeyStep, err = field(spec, "keystep"); err != nil {
			return err
		}
		ks.Limit, err = field(spec, "limit")
	case "keynum":
		if ks.KeyNumIdx, err = field(spec, "keynumidx"); err != nil {
			return err
		}
		if ks.FirstKey, err = field(spec, "firstkey"); err != nil {
			return err
		}
		ks.KeyStep, err = field(spec, "keystep")
	case "unknown":
	default:
		err = fmt.Errorf("unexpected type %q", typ)
	}
	if err == nil && typ != "unknown" && ks.KeyStep < 1 {
		err = fmt.Errorf("keystep %d below 1", ks.KeyStep)
	}
	return err
}

// typed reads {type T, spec {...}}.
func typed(raw any) (string, map[string]any, error) {
	m, err := pairs(raw)
	if err != nil {
		return "", nil, err
	}
	typ, err := textField(m, "type")
	if err != nil {
		return "", nil, err
	}
	spec, err := pairs(m["spec"])
	if err != nil {
		return "", nil, fmt.Errorf("spec: %w", err)
	}
	return typ, spec, nil
}

// pairs reads a RESP2 flattened map (key, value, key, value, ...).
func pairs(raw any) (map[string]any, error) {
	a, ok := raw.([]any)
	if !ok || len(a)%2 != 0 {
		return nil, fmt.Errorf("not a map (an array of key, value pairs): %s", describe(raw))
	}
	m := make(map[string]any, len(a)/2)
	for i := 0; i < len(a); i += 2 {
		k, err := text(a[i])
		if err != nil {
			return nil, fmt.Errorf("map key: %w", err)
		}
		m[k] = a[i+1]
	}
	return m, nil
}

func field(m map[string]any, name string) (int, error) {
	v, ok := m[name]
	if !ok {
		return 0, fmt.Errorf("field %q missing", name)
	}
	n, err := integer(v)
	if err != nil {
		return 0, fmt.Errorf("field %q: %w", name, err)
	}
	return n, nil
}

func textField(m map[string]any, name string) (string, error) {
	v, ok := m[name]
	if !ok {
		return "", fmt.Errorf("field %q missing", name)
	}
	s, err := text(v)
	if err != nil {
		return "", fmt.Errorf("field %q: %w", name, err)
	}
	return s, nil
}

func text(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case []byte:
		return string(v), nil
	}
	return "", fmt.Errorf("not a string: %s", describe(v))
}

func texts(v any) ([]string, error) {
	a, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("not an array: %s", describe(v))
	}
	out := make([]string, 0, len(a))
	for _, x := range a {
		s, err := text(x)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func integer(v any) (int, error) {
	n, ok := v.(int64)
	if !ok {
		return 0, fmt.Errorf("not an integer: %s", describe(v))
	}
	if int64(int(n)) != n {
		return 0, fmt.Errorf("integer %d out of range", n)
	}
	return int(n), nil
}

// describe names the kind of a RESP2 reply value as redigo returns it,
// for an error that says what a reply held instead of what was expected.
func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "a nil reply"
	case string:
		return fmt.Sprintf("the status reply %q", v)
	case []byte:
		return fmt.Sprintf("the bulk string %q", truncate(string(v)))
	case int64:
		return fmt.Sprintf("the integer %d", v)
	case redis.Error:
		return fmt.Sprintf("the error reply %q", truncate(string(v)))
	case []any:
		if len(v) == 1 {
			return "an array of 1 element"
		}
		return fmt.Sprintf("an array of %d elements", len(v))
	}
	return fmt.Sprintf("a value of type %T", v)
}

// truncate shortens a reply's text for an error.
func truncate(s string) string {
	const most = 40
	if len(s) <= most {
		return s
	}
	return s[:most] + "..."
}

package main

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// commandInfo holds what redis-server 7.0.15 answers to COMMAND INFO for
// each command fakeredis serves, one file per command and protocol
// version, captured from a real server with "COMMAND INFO name" after
// HELLO 2 or HELLO 3 and stored without the one-element array header.
// Clients that learn key positions from COMMAND (go-redis's
// ClusterClient) then route and log exactly as they do against Redis.
//
//go:embed commandinfo/resp2/*.resp commandinfo/resp3/*.resp
var commandInfo embed.FS

// commandTables are the stored COMMAND replies; commandTablesErr says
// why they could not be read (run refuses to start then).
var commandTables, commandTablesErr = loadCommandTables()

// commandTable is the COMMAND reply of one protocol version.
type commandTable struct {
	entries map[string][]byte // lower-case name → one encoded entry
	all     []byte            // the reply to COMMAND: every entry
}

// loadCommandTables reads the stored entries of both protocol versions
// and checks that each is one whole RESP value.
func loadCommandTables() ([2]commandTable, error) {
	var tables [2]commandTable
	for v := range 2 {
		dir := fmt.Sprintf("commandinfo/resp%d", v+2)
		files, err := fs.ReadDir(commandInfo, dir)
		if err != nil {
			return tables, err
		}
		t := commandTable{entries: map[string][]byte{}}
		var names []string
		for _, f := range files {
			b, err := commandInfo.ReadFile(path.Join(dir, f.Name()))
			if err != nil {
				return tables, err
			}
			if end, err := valueEnd(b, 0); err != nil || end != len(b) {
				return tables, fmt.Errorf("%s/%s is not one RESP value (end %d of %d): %v", dir, f.Name(), end, len(b), err)
			}
			name := strings.TrimSuffix(f.Name(), ".resp")
			t.entries[name] = b
			names = append(names, name)
		}
		slices.Sort(names)
		t.all = arrayHeader(nil, len(names))
		for _, n := range names {
			t.all = append(t.all, t.entries[n]...)
		}
		tables[v] = t
	}
	return tables, nil
}

// command answers COMMAND, COMMAND COUNT, COMMAND INFO and COMMAND DOCS
// as Redis 7 does for the commands fakeredis serves.
func (s *server) command(out []byte, cs *connState, args [][]byte) []byte {
	t := &s.r.commands[cs.proto-2]
	if len(args) == 1 {
		return append(out, t.all...)
	}
	switch sub := args[1]; {
	case is(sub, "COUNT"):
		return integer(out, len(t.entries))
	case is(sub, "INFO"):
		names := args[2:]
		if len(names) == 0 {
			return append(out, t.all...)
		}
		out = arrayHeader(out, len(names))
		for _, n := range names {
			if e, ok := t.entries[strings.ToLower(string(n))]; ok {
				out = append(out, e...)
			} else if cs.proto == 3 {
				out = append(out, "_\r\n"...)
			} else {
				out = append(out, "$-1\r\n"...)
			}
		}
		return out
	case is(sub, "DOCS"):
		if cs.proto == 3 {
			return append(out, "%0\r\n"...)
		}
		return append(out, "*0\r\n"...)
	}
	out = append(out, "-ERR unknown subcommand '"...)
	out = append(out, sanitize(args[1])...)
	return append(out, "'. Try COMMAND HELP.\r\n"...)
}

// valueEnd returns the position just after the RESP2 or RESP3 value that
// starts at b[pos].
func valueEnd(b []byte, pos int) (int, error) {
	if pos >= len(b) {
		return pos, fmt.Errorf("value missing at %d", pos)
	}
	kind := b[pos]
	line, next, err := lineAt(b, pos+1)
	if err != nil {
		return pos, err
	}
	switch kind {
	case '+', '-', ':', ',', '_', '#', '(':
		return next, nil
	case '$', '=', '!':
		n, err := atoi(line)
		if err != nil {
			return pos, err
		}
		if n < 0 {
			return next, nil
		}
		end := next + n + 2
		if end > len(b) || b[end-2] != '\r' || b[end-1] != '\n' {
			return pos, fmt.Errorf("bulk string at %d not ended by CRLF", pos)
		}
		return end, nil
	case '*', '~', '>', '%', '|':
		n, err := atoi(line)
		if err != nil {
			return pos, err
		}
		if kind == '%' || kind == '|' {
			n *= 2
		}
		for range max(n, 0) {
			if next, err = valueEnd(b, next); err != nil {
				return pos, err
			}
		}
		return next, nil
	}
	return pos, fmt.Errorf("unknown RESP type %q at %d", kind, pos)
}

// lineAt returns the line that starts at b[pos] without its CRLF, and the
// position after the CRLF.
func lineAt(b []byte, pos int) ([]byte, int, error) {
	for i := pos; i+1 < len(b); i++ {
		if b[i] == '\r' && b[i+1] == '\n' {
			return b[pos:i], i + 2, nil
		}
	}
	return nil, pos, fmt.Errorf("line at %d not ended by CRLF", pos)
}

func atoi(line []byte) (int, error) {
	neg := len(line) > 0 && line[0] == '-'
	if neg {
		line = line[1:]
	}
	if len(line) == 0 || len(line) > 10 {
		return 0, fmt.Errorf("bad length %q", line)
	}
	n := 0
	for _, c := range line {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("bad length %q", line)
		}
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}

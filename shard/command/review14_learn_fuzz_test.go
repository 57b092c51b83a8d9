package command

import (
	"errors"
	"strings"
	"testing"
)

// learnEntry builds a COMMAND INFO entry (RESP2, as redigo returns it) of a
// command "x" with one key spec made of the given fields.
func learnEntry(arity int64, flags []string, begin string, beginSpec []any, find string, findSpec []any) []any {
	fl := make([]any, len(flags))
	for i, f := range flags {
		fl[i] = []byte(f)
	}
	spec := []any{
		[]byte("flags"), fl,
		[]byte("begin_search"), []any{[]byte("type"), []byte(begin), []byte("spec"), beginSpec},
		[]byte("find_keys"), []any{[]byte("type"), []byte(find), []byte("spec"), findSpec},
	}
	return []any{[]byte("x"), arity, []any{[]byte("readonly")}, int64(1), int64(1), int64(1),
		[]any{}, []any{}, []any{spec}, []any{}}
}

// checkPositions calls KeyPositions and ChannelPositions of info with args
// and fails unless each keeps dst's prefix, returns only indexes into
// args, and fails only with ErrBadArgs or ErrUnknownCommand, adding
// nothing then.
func checkPositions(t *testing.T, info *Info, a []any) {
	t.Helper()
	for _, channels := range []bool{false, true} {
		dst := []int{-7}
		var got []int
		var err error
		if channels {
			got, err = info.ChannelPositions(a, dst)
		} else {
			got, err = info.KeyPositions(a, dst)
		}
		if len(got) == 0 || got[0] != -7 {
			t.Fatalf("%+v %q: dst prefix lost: %v", info.KeySpecs, a, got)
		}
		if err != nil {
			if !errors.Is(err, ErrBadArgs) && !errors.Is(err, ErrUnknownCommand) {
				t.Fatalf("%+v %q: unexpected error %v", info.KeySpecs, a, err)
			}
			if len(got) != 1 {
				t.Fatalf("%+v %q: positions %v returned with error %v", info.KeySpecs, a, got, err)
			}
			continue
		}
		for _, p := range got[1:] {
			if p < 0 || p >= len(a) {
				t.Fatalf("%+v %q: position %d outside %d args", info.KeySpecs, a, p, len(a))
			}
		}
	}
	EffectOf(info, info.Name, a)
}

// FuzzFromCommandInfoKeySpecs: a server's COMMAND INFO entry (a module's
// command, one newer than the table) carries key specs with any integers.
// FromCommandInfo keeps the values it accepts as they were sent, and the
// Info it returns never makes KeyPositions or ChannelPositions panic or
// return an index outside the arguments, whatever the numbers.
func FuzzFromCommandInfoKeySpecs(f *testing.F) {
	f.Add(int64(2), uint8(0), int64(1), "", int64(0), uint8(0), int64(0), int64(1), int64(0), uint8(0), []byte("k"))
	f.Add(int64(-3), uint8(0), int64(1), "", int64(0), uint8(0), int64(-1), int64(2), int64(0), uint8(1), []byte("k\x00v\x00k2\x00v2"))
	f.Add(int64(-3), uint8(0), int64(2), "", int64(0), uint8(1), int64(0), int64(1), int64(1), uint8(2), []byte("s\x00\x01\x02\x00a\x00b"))
	f.Add(int64(-2), uint8(1), int64(0), "STORE", int64(-2), uint8(0), int64(0), int64(1), int64(0), uint8(3), []byte("a\x00STORE\x00d"))
	f.Add(int64(-2), uint8(1), int64(0), "KEYS", int64(1), uint8(0), int64(-1), int64(1), int64(2), uint8(0), []byte("KEYS\x00a\x00b\x00c"))
	f.Add(int64(-2), uint8(0), int64(1), "", int64(0), uint8(0), int64(0), int64(9223372036854775807), int64(0), uint8(0), []byte("k"))
	f.Fuzz(func(t *testing.T, arity int64, begin uint8, index int64, keyword string, startFrom int64,
		find uint8, n1, n2, n3 int64, flagBits uint8, raw []byte) {
		var flags []string
		for i, name := range []string{"RO", "not_key", "incomplete", "variable_flags"} {
			if flagBits&(1<<i) != 0 {
				flags = append(flags, name)
			}
		}
		var beginType string
		var beginSpec []any
		switch begin % 3 {
		case 0:
			beginType, beginSpec = "index", []any{[]byte("index"), index}
		case 1:
			beginType, beginSpec = "keyword", []any{[]byte("keyword"), []byte(keyword), []byte("startfrom"), startFrom}
		default:
			beginType, beginSpec = "unknown", []any{}
		}
		var findType string
		var findSpec []any
		switch find % 3 {
		case 0:
			findType, findSpec = "range", []any{[]byte("lastkey"), n1, []byte("keystep"), n2, []byte("limit"), n3}
		case 1:
			findType, findSpec = "keynum", []any{[]byte("keynumidx"), n1, []byte("firstkey"), n2, []byte("keystep"), n3}
		default:
			findType, findSpec = "unknown", []any{}
		}
		info, err := FromCommandInfo(learnEntry(arity, flags, beginType, beginSpec, findType, findSpec))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "shardis: COMMAND INFO reply: ") {
				t.Fatalf("error %q without the package's prefix", err)
			}
			return
		}
		if info.Name != "x" || int64(info.Arity) != arity || len(info.KeySpecs) != 1 {
			t.Fatalf("learned %+v from arity %d and one key spec", info, arity)
		}
		ks := info.KeySpecs[0]
		switch beginType {
		case "index":
			if ks.Begin.Kind != BeginIndex || int64(ks.Begin.Index) != index {
				t.Fatalf("begin_search index %d learned as %+v", index, ks.Begin)
			}
		case "keyword":
			if ks.Begin.Kind != BeginKeyword || ks.Begin.Keyword != keyword || int64(ks.Begin.StartFrom) != startFrom {
				t.Fatalf("begin_search keyword %q startfrom %d learned as %+v", keyword, startFrom, ks.Begin)
			}
		}
		switch findType {
		case "range":
			if ks.Find.Kind != FindRange || int64(ks.Find.LastKey) != n1 || int64(ks.Find.KeyStep) != n2 || int64(ks.Find.Limit) != n3 {
				t.Fatalf("find_keys range %d %d %d learned as %+v", n1, n2, n3, ks.Find)
			}
		case "keynum":
			if ks.Find.Kind != FindKeyNum || int64(ks.Find.KeyNumIdx) != n1 || int64(ks.Find.FirstKey) != n2 || int64(ks.Find.KeyStep) != n3 {
				t.Fatalf("find_keys keynum %d %d %d learned as %+v", n1, n2, n3, ks.Find)
			}
		}
		a := fuzzArgs(raw)
		if len(a) > 64 {
			a = a[:64]
		}
		checkPositions(t, info, a)
	})
}

// decodeReply turns fuzz bytes into a reply value of the shapes redigo
// returns, with words of the COMMAND INFO format among its strings so
// that the fuzzer reaches the key spec maps.
func decodeReply(data []byte, depth int) (any, []byte) {
	if len(data) == 0 || depth > 6 {
		return nil, data
	}
	words := []string{"x", "flags", "begin_search", "find_keys", "type", "spec", "index", "keyword",
		"startfrom", "range", "keynum", "lastkey", "keystep", "limit", "keynumidx", "firstkey", "unknown",
		"notes", "RO", "not_key", "incomplete", "readonly", "write", "get", "STORE"}
	tag, data := data[0], data[1:]
	switch tag % 5 {
	case 0:
		return nil, data
	case 1:
		if len(data) == 0 {
			return []byte{}, data
		}
		w := words[int(data[0])%len(words)]
		return []byte(w), data[1:]
	case 2:
		if len(data) == 0 {
			return int64(0), data
		}
		return int64(int8(data[0])), data[1:]
	case 3:
		if len(data) == 0 {
			return []any{}, data
		}
		n := int(data[0]) % 12
		data = data[1:]
		arr := make([]any, 0, n)
		for range n {
			var v any
			v, data = decodeReply(data, depth+1)
			arr = append(arr, v)
		}
		return arr, data
	default:
		if len(data) == 0 {
			return "", data
		}
		n := min(int(data[0])%8, len(data)-1)
		return string(data[1 : 1+n]), data[1+n:]
	}
}

// FuzzFromCommandInfoReply: FromCommandInfo reads any reply value without
// panicking, fails with an error that names the reply, and what it
// accepts never makes KeyPositions or ChannelPositions panic or return an
// index outside the arguments.
func FuzzFromCommandInfoReply(f *testing.F) {
	f.Add([]byte{3, 10, 1, 0, 2, 2, 3, 1, 1, 20, 2, 1, 2, 1, 2, 1, 3, 0, 3, 0, 3, 0, 3, 0}, []byte("k"))
	f.Add([]byte{3, 10, 1, 0, 2, 0xfe, 3, 0, 2, 1, 2, 1, 2, 1, 3, 0, 3, 0,
		3, 1, 3, 6, 1, 1, 3, 0, 1, 2, 3, 4, 1, 4, 1, 6, 1, 5, 3, 2, 1, 6, 2, 1,
		1, 3, 3, 4, 1, 4, 1, 9, 1, 5, 3, 6, 1, 11, 2, 0, 1, 12, 2, 1, 1, 13, 2, 0, 3, 0}, []byte("a\x00b"))
	f.Fuzz(func(t *testing.T, data, raw []byte) {
		entry, _ := decodeReply(data, 0)
		info, err := FromCommandInfo(entry)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "shardis: COMMAND INFO reply: ") {
				t.Fatalf("error %q without the package's prefix", err)
			}
			return
		}
		a := fuzzArgs(raw)
		if len(a) > 64 {
			a = a[:64]
		}
		checkPositions(t, info, a)
		for _, s := range info.Subcommands {
			checkPositions(t, s, a)
		}
	})
}

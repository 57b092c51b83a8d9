package command

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// fuzzNames lists every command and subcommand name, in table order.
var fuzzNames = func() []string {
	var names []string
	for _, info := range All() {
		names = append(names, info.Name)
		for _, s := range info.Subcommands {
			names = append(names, s.Name)
		}
	}
	return names
}()

// fuzzArgs splits raw at NUL bytes into arguments; an argument that starts
// with 0x01 becomes an int (the following bytes, little endian), one that
// starts with 0x02 a []byte, the others strings.
func fuzzArgs(raw []byte) []any {
	if len(raw) == 0 {
		return nil
	}
	var out []any
	for _, part := range bytes.Split(raw, []byte{0}) {
		switch {
		case len(part) > 0 && part[0] == 1:
			var buf [8]byte
			copy(buf[:], part[1:])
			out = append(out, int64(binary.LittleEndian.Uint64(buf[:])))
		case len(part) > 0 && part[0] == 2:
			out = append(out, part[1:])
		default:
			out = append(out, string(part))
		}
	}
	return out
}

// FuzzKeyPositions: for any command from the table and any arguments,
// KeyPositions and ChannelPositions do not panic, return indexes within
// args, leave dst's prefix alone, add nothing on error, and fail only with
// ErrBadArgs or ErrUnknownCommand.
func FuzzKeyPositions(f *testing.F) {
	f.Add(uint16(0), []byte("k"))
	f.Add(uint16(1), []byte("return 1\x00\x01\x03\x00a\x00b\x00c"))
	f.Add(uint16(2), []byte("COUNT\x00\x01\x0a\x00STREAMS\x00s1\x00s2\x000\x000"))
	f.Add(uint16(3), []byte("src\x00BY\x00w\x00LIMIT\x000\x0010\x00STORE\x00dst"))
	f.Add(uint16(4), []byte("h\x00p\x00\x000\x005000\x00AUTH2\x00u\x00KEYS\x00KEYS\x00k1"))
	f.Add(uint16(5), []byte("\x02ENCODING\x00k"))
	f.Add(uint16(6), []byte("g\x0015\x0037\x00200\x00km\x00STORE\x00dst\x00STOREDIST\x00dd"))
	f.Add(uint16(7), []byte("-1\x00a"))
	f.Add(uint16(8), []byte(""))
	seeds := []string{"get", "eval", "xread", "sort", "migrate", "object", "georadius", "zunion", "ping"}
	f.Fuzz(func(t *testing.T, pick uint16, raw []byte) {
		name := fuzzNames[int(pick)%len(fuzzNames)]
		if int(pick) < len(seeds) {
			name = seeds[pick]
		}
		a := fuzzArgs(raw)
		top := name
		if i := bytes.IndexByte([]byte(name), '|'); i >= 0 {
			top = name[:i]
		}
		for _, info := range []*Info{Lookup(top), Lookup(name)} {
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
					t.Fatalf("%s %q: dst prefix lost: %v", name, a, got)
				}
				if err != nil {
					if !errors.Is(err, ErrBadArgs) && !errors.Is(err, ErrUnknownCommand) {
						t.Fatalf("%s %q: unexpected error %v", name, a, err)
					}
					if len(got) != 1 {
						t.Fatalf("%s %q: positions %v returned with error %v", name, a, got, err)
					}
					continue
				}
				for _, p := range got[1:] {
					if p < 0 || p >= len(a) {
						t.Fatalf("%s %q: position %d outside %d args", name, a, p, len(a))
					}
				}
			}
		}
	})
}

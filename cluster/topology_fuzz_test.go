package cluster

import (
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// The fuzz targets of the reply parsers get bytes, and build from them a
// RESP2 value of the shapes redigo returns, with a tiny decoder: each
// value starts with an opcode byte.
const (
	opNil    = iota // nil
	opSmall         // int64 from one signed byte
	opUint16        // int64 from two bytes, big-endian: slots and ports
	opBulk          // []byte: a length byte, then that many bytes
	opWord          // []byte: an index byte into fuzzWords
	opArray         // []any: a count byte, then that many values
	opStatus        // string: an index byte into fuzzWords
	opError         // redis.Error
	opCount
)

// fuzzWords are the strings topology replies are made of, so that the
// fuzzer reaches deep into the parsers without guessing them.
var fuzzWords = []string{
	"slots", "nodes", "id", "port", "tls-port", "ip", "endpoint", "hostname", "role",
	"replication-offset", "health", "master", "replica", "slave", "online", "fail", "loading",
	"?", "", "127.0.0.1", "::1", "node-a.example", idA, idB, idC,
}

const (
	fuzzMaxDepth  = 6
	fuzzMaxValues = 4000
)

type fuzzDecoder struct {
	data   []byte
	values int
}

func (d *fuzzDecoder) next() byte {
	if len(d.data) == 0 {
		return 0
	}
	b := d.data[0]
	d.data = d.data[1:]
	return b
}

// decodeReply builds a reply from data.
func decodeReply(data []byte) any {
	d := &fuzzDecoder{data: data}
	return d.value(0)
}

func (d *fuzzDecoder) value(depth int) any {
	d.values++
	if d.values > fuzzMaxValues {
		return nil
	}
	switch d.next() % opCount {
	case opSmall:
		return int64(int8(d.next()))
	case opUint16:
		hi, lo := d.next(), d.next()
		return int64(binary.BigEndian.Uint16([]byte{hi, lo}))
	case opBulk:
		n := min(int(d.next()), len(d.data))
		b := make([]byte, n)
		copy(b, d.data)
		d.data = d.data[n:]
		return b
	case opWord:
		return []byte(fuzzWords[int(d.next())%len(fuzzWords)])
	case opArray:
		n := int(d.next())
		if depth >= fuzzMaxDepth {
			return []any{}
		}
		out := make([]any, 0, min(n, 64))
		for range n {
			if len(d.data) == 0 {
				break
			}
			out = append(out, d.value(depth+1))
		}
		return out
	case opStatus:
		return fuzzWords[int(d.next())%len(fuzzWords)]
	case opError:
		return redis.Error("ERR fuzz")
	}
	return nil
}

// encodeReply is the inverse of decodeReply, for seeds: it turns a reply
// (arrays of at most 255 elements, strings of at most 255 bytes, integers
// within -128..65535) into bytes.
func encodeReply(v any) []byte {
	var out []byte
	var enc func(v any)
	enc = func(v any) {
		switch v := v.(type) {
		case nil:
			out = append(out, opNil)
		case int64:
			if v < 0 {
				out = append(out, opSmall, byte(int8(v)))
			} else {
				out = append(out, opUint16, byte(v>>8), byte(v))
			}
		case []byte:
			for i, w := range fuzzWords {
				if w == string(v) {
					out = append(out, opWord, byte(i))
					return
				}
			}
			out = append(out, opBulk, byte(len(v)))
			out = append(out, v...)
		case string:
			out = append(out, opStatus, 0)
		case redis.Error:
			out = append(out, opError)
		case []any:
			out = append(out, opArray, byte(len(v)))
			for _, e := range v {
				enc(e)
			}
		}
	}
	enc(v)
	return out
}

func TestFuzzDecoderRoundTrip(t *testing.T) {
	for _, reply := range []any{sampleShards(), sampleSlots()} {
		got := decodeReply(encodeReply(reply))
		if a, b := formatAny(got), formatAny(reply); a != b {
			t.Fatalf("round trip changed the reply:\n%s\nwant:\n%s", a, b)
		}
	}
}

// formatAny renders a reply for comparison.
func formatAny(v any) string {
	switch v := v.(type) {
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = formatAny(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case []byte:
		return "b" + string(v)
	case int64:
		return "i" + strconv.FormatInt(v, 10)
	case nil:
		return "nil"
	}
	return "?"
}

// checkFuzzResult checks what every parser promises on any input.
func checkFuzzResult(t *testing.T, tab *Table, err error) {
	t.Helper()
	if err != nil {
		if tab != nil {
			t.Fatalf("a table along with error %v", err)
		}
		if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrIncomplete) && !errors.Is(err, ErrAmbiguous) {
			t.Fatalf("error %v wraps none of ErrMalformed, ErrIncomplete and ErrAmbiguous", err)
		}
		if !strings.HasPrefix(err.Error(), "shardis: ") {
			t.Fatalf("error %q does not start with \"shardis: \"", err)
		}
		return
	}
	checkTable(t, tab)
}

// replySeeds are the shapes of real replies, and variants with quirks.
func replySeeds() []any {
	return []any{
		sampleShards(),
		sampleSlots(),
		oneShard(A{"id", idA, "port", 7100, "ip", "", "endpoint", "", "role", "master", "health", "online"}),
		allSlots(A{nil, 7100, idA, A{"ip", "127.0.0.1"}}, A{"?", 7101, idB, A{"ip", ""}}),
		allSlots(A{"127.0.0.1", 7100}, A{"127.0.0.1", 7101, idB}, A{"127.0.0.1", 7102, idC, A{}, "x"}),
		withShard(A{"slots", A{5461, 10922}, "nodes", A{
			shardNode(idB, 7001, "master", "fail"),
			shardNode(idD, 7003, "replica", "loading"),
			shardNode(idF, 7005, "master", "online"),
		}}),
		resp(A{A{"slots", A{0, 100, 200, 16383}, "nodes", A{shardNode(idA, 7000, "master", "online")}},
			A{"slots", A{101, 199}, "nodes", A{shardNode(idB, 7001, "master", "online")}}}),
		resp(A{A{"slots", A{}, "nodes", A{}}}),
		A{},
		nil,
	}
}

func FuzzParseShards(f *testing.F) {
	for _, r := range replySeeds() {
		f.Add(encodeReply(r))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		reply := decodeReply(data)
		tab, err := ParseShards(reply, "127.0.0.1:7000")
		checkFuzzResult(t, tab, err)
		tab, err = ParseShardsTLS(reply, "")
		checkFuzzResult(t, tab, err)
	})
}

func FuzzParseSlots(f *testing.F) {
	for _, r := range replySeeds() {
		f.Add(encodeReply(r))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tab, err := ParseSlots(decodeReply(data), "127.0.0.1:7000")
		checkFuzzResult(t, tab, err)
	})
}

func FuzzParseNodes(f *testing.F) {
	f.Add(sampleNodes(), "127.0.0.1:7002")
	f.Add(idA+" :7100@17100 myself,master - 0 0 0 connected 0-16383\n", "10.0.0.1:7100")
	f.Add(idA+" ::1:7000@17000,node-a myself,master - 0 0 1 connected 0-5460 5461 [5462-<-"+idB+"]\n"+
		idB+" [::1]:7001@17001 master - 0 0 2 connected 5462-16383\n"+
		idC+" 127.0.0.1:7002@17002 slave,fail "+idB+" 0 0 2 disconnected\n", "[::1]:7000")
	f.Add(idA+" 127.0.0.1:7000 master,fail - 0 0 1 disconnected 0-16383\r\n"+
		idB+" :0@0 slave,noaddr "+idA+" 0 0 1 disconnected\r\n", "")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, text, asked string) {
		tab, err := ParseNodes(text, asked)
		checkFuzzResult(t, tab, err)
	})
}

package redistest

import (
	"bufio"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestParseNodes(t *testing.T) {
	// Lines in the shapes Redis 7.0 produces (see CLUSTER NODES in the
	// Redis documentation): myself, replicas, failed masters, migrating
	// slots, hostnames, unknown own address.
	text := "" +
		"4a17b486aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 127.0.0.1:7403@17403 myself,master - 0 1795962465000 3 connected 10923-16383 [12182->-8e02c070bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb]\n" +
		"8e02c070bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb 127.0.0.1:7401@17401 master - 0 1795962465000 1 connected 0-5460 [12182-<-4a17b486aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]\n" +
		"cccccccccccccccccccccccccccccccccccccccc 127.0.0.1:7402@17402,node-b.example master,fail - 1795962514661 1795962514157 2 disconnected 5461 5462-10922\n" +
		"dddddddddddddddddddddddddddddddddddddddd 127.0.0.1:7404@17404 slave 8e02c070bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb 0 1795962465000 1 connected\n" +
		"eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee :7100@17100 myself,master - 0 0 0 connected\n"
	got, err := parseNodes(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []nodeInfo{
		{ID: "4a17b486aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", Port: 7403, Flags: []string{"myself", "master"}, Slots: [][2]int{{10923, 16383}}},
		{ID: "8e02c070bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", Port: 7401, Flags: []string{"master"}, Slots: [][2]int{{0, 5460}}},
		{ID: "cccccccccccccccccccccccccccccccccccccccc", Port: 7402, Flags: []string{"master", "fail"}, Slots: [][2]int{{5461, 5461}, {5462, 10922}}},
		{ID: "dddddddddddddddddddddddddddddddddddddddd", Port: 7404, Flags: []string{"slave"}, MasterID: "8e02c070bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"},
		{ID: "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee", Port: 7100, Flags: []string{"myself", "master"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parseNodes =\n%+v\nwant\n%+v", got, want)
	}
	if got[2].healthy() || !got[1].healthy() {
		t.Errorf("healthy(): failed master %t, live master %t", got[2].healthy(), got[1].healthy())
	}
	if !got[2].owns(5461) || got[2].owns(5460) || !got[0].owns(16383) {
		t.Errorf("owns() wrong")
	}
	ms := healthyMasters(got)
	if len(ms) != 3 || ms[0].Port != 7401 || ms[1].Port != 7403 || ms[2].Port != 7100 {
		t.Errorf("healthyMasters order = %+v", ms)
	}
}

func TestParseNodesErrors(t *testing.T) {
	tests := []struct{ name, text string }{
		{"too few fields", "abc 127.0.0.1:1@2 master - 0 0"},
		{"bad port", "abc 127.0.0.1:x@2 master - 0 0 1 connected"},
		{"no colon", "abc 127.0.0.1 master - 0 0 1 connected"},
		{"port too big", "abc 127.0.0.1:70000@2 master - 0 0 1 connected"},
		{"bad slot", "abc 127.0.0.1:1@2 master - 0 0 1 connected 5-x"},
		{"reversed range", "abc 127.0.0.1:1@2 master - 0 0 1 connected 9-5"},
		{"slot too big", "abc 127.0.0.1:1@2 master - 0 0 1 connected 16384"},
		{"negative slot", "abc 127.0.0.1:1@2 master - 0 0 1 connected -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := parseNodes(tt.text); !errors.Is(err, errProtocol) {
				t.Fatalf("parseNodes(%q) = %v, want errProtocol", tt.text, err)
			}
		})
	}
}

func TestParseSlotsAndCoverage(t *testing.T) {
	node := func(port int64, id string) []any { return []any{"127.0.0.1", port, id, []any{}} }
	full := []any{
		[]any{int64(5461), int64(10922), node(2, "b"), node(5, "e")},
		[]any{int64(0), int64(5460), node(1, "a"), node(4, "d")},
		[]any{int64(10923), int64(16383), node(3, "c")},
	}
	ranges, err := parseSlots(full)
	if err != nil {
		t.Fatal(err)
	}
	if err := covered(ranges); err != nil {
		t.Errorf("covered(full) = %v", err)
	}
	if got := ownersSignature(ranges); got != "0-5460:a 5461-10922:b 10923-16383:c" {
		t.Errorf("signature = %q", got)
	}
	if !reflect.DeepEqual(ranges[0].Replicas, []string{"d"}) || ranges[2].Replicas != nil {
		t.Errorf("replicas = %v, %v", ranges[0].Replicas, ranges[2].Replicas)
	}

	coverage := []struct {
		name   string
		ranges []slotRange
		want   string
	}{
		{"empty", nil, "slots 0-16383 are not served"},
		{"gap", []slotRange{{Start: 0, End: 10}, {Start: 12, End: 16383}}, "slots 11-11"},
		{"overlap", []slotRange{{Start: 0, End: 10}, {Start: 10, End: 16383}}, "served twice"},
		{"short", []slotRange{{Start: 0, End: 16000}}, "slots 16001-16383"},
		{"late start", []slotRange{{Start: 1, End: 16383}}, "slots 0-0"},
	}
	for _, tt := range coverage {
		if err := covered(tt.ranges); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: covered = %v, want %q", tt.name, err, tt.want)
		}
	}

	bad := []struct {
		name string
		v    any
	}{
		{"not an array", "x"},
		{"short entry", []any{[]any{int64(0), int64(1)}}},
		{"string start", []any{[]any{"0", int64(1), node(1, "a")}}},
		{"end past 16383", []any{[]any{int64(0), int64(16384), node(1, "a")}}},
		{"node not an array", []any{[]any{int64(0), int64(1), "a"}}},
		{"id not a string", []any{[]any{int64(0), int64(1), []any{"h", int64(1), int64(5)}}}},
	}
	for _, tt := range bad {
		if _, err := parseSlots(tt.v); !errors.Is(err, errProtocol) {
			t.Errorf("%s: parseSlots = %v, want errProtocol", tt.name, err)
		}
	}
}

func TestReadReply(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want any
		err  error
	}{
		{"simple", "+OK\r\n", "OK", nil},
		{"error", "-ERR bad\r\n", &ReplyError{Message: "ERR bad"}, nil},
		{"integer", ":-42\r\n", int64(-42), nil},
		{"bulk", "$5\r\nhe\r\no\r\n", "he\r\no", nil},
		{"empty bulk", "$0\r\n\r\n", "", nil},
		{"nil bulk", "$-1\r\n", nil, nil},
		{"nil array", "*-1\r\n", nil, nil},
		{"nested", "*2\r\n*1\r\n:1\r\n-MOVED 1 a:1\r\n", []any{[]any{int64(1)}, &ReplyError{Message: "MOVED 1 a:1"}}, nil},
		{"empty input", "", nil, io.EOF},
		{"no CRLF", "+OK\n", nil, errProtocol},
		{"truncated line", "+OK", nil, io.ErrUnexpectedEOF},
		{"bad integer", ":x\r\n", nil, errProtocol},
		{"bad bulk length", "$-2\r\n", nil, errProtocol},
		{"huge bulk", "$999999999999\r\n", nil, errProtocol},
		{"short bulk", "$5\r\nab", nil, io.ErrUnexpectedEOF},
		{"bulk without CRLF", "$2\r\nabcd", nil, errProtocol},
		{"short array", "*2\r\n:1\r\n", nil, io.ErrUnexpectedEOF},
		{"unknown type", "?x\r\n", nil, errProtocol},
		{"too deep", strings.Repeat("*1\r\n", maxDepth+2) + ":1\r\n", nil, errProtocol},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readReply(bufio.NewReader(strings.NewReader(tt.in)), 0)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("readReply = %v, %v; want error %v", got, err, tt.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("readReply = %#v, %v; want %#v", got, err, tt.want)
			}
		})
	}
}

func TestEncodeAndFormat(t *testing.T) {
	if got := string(encodeCommand([]string{"SET", "k", ""})); got != "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n" {
		t.Errorf("encodeCommand = %q", got)
	}
	v := []any{"a", int64(2), nil, []any{"b", &ReplyError{Message: "ERR x"}}}
	if got := formatReply(v); got != "a\n2\n\nb\nERR x" {
		t.Errorf("formatReply = %q", got)
	}
}

func TestInfoField(t *testing.T) {
	info := "# Cluster\r\ncluster_state:ok\r\ncluster_slots_assigned:16384\r\n"
	if got := infoField(info, "cluster_state"); got != "ok" {
		t.Errorf("cluster_state = %q", got)
	}
	if got := infoField(info, "cluster_slots"); got != "" {
		t.Errorf("a prefix of a field name matched: %q", got)
	}
}

// FuzzReadReply checks that no input makes the RESP reader panic or
// return both a value and an error.
func FuzzReadReply(f *testing.F) {
	for _, s := range []string{"+OK\r\n", "-ERR x\r\n", ":1\r\n", "$3\r\nabc\r\n", "*2\r\n$-1\r\n*0\r\n", "*1\r\n*1\r\n*1\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := readReply(bufio.NewReader(strings.NewReader(string(data))), 0)
		if err != nil && v != nil {
			t.Fatalf("value %#v with error %v", v, err)
		}
		if err == nil {
			// A value re-encodes and formats without trouble.
			_ = formatReply(v)
		}
	})
}

// FuzzParseNodes checks that parseNodes never panics and that whatever it
// accepts is within range.
func FuzzParseNodes(f *testing.F) {
	f.Add("abc 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460 [1->-x]\n")
	f.Add("abc :7000@17000,host slave def 0 0 1 connected\n")
	f.Add("a b c d e f g h 1 2-3")
	f.Fuzz(func(t *testing.T, text string) {
		nodes, err := parseNodes(text)
		if err != nil {
			return
		}
		for _, n := range nodes {
			if n.Port < 0 || n.Port > 65535 {
				t.Fatalf("port %d", n.Port)
			}
			for _, r := range n.Slots {
				if r[0] < 0 || r[1] < r[0] || r[1] >= SlotCount {
					t.Fatalf("slot range %v", r)
				}
			}
		}
	})
}

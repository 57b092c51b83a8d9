package reshard

import (
	"strings"
	"testing"
)

// FuzzParseClientList checks that any CLIENT LIST text parses without a
// panic, one entry per non-empty line, each field taken from its line.
func FuzzParseClientList(f *testing.F) {
	f.Add("id=3 addr=127.0.0.1:5000 laddr=127.0.0.1:6379 fd=8 name=shardis:ab:ring-1 age=0 flags=N cmd=get\n")
	f.Add("id=4 addr=x name= flags=S cmd=replconf\r\nid=5\n\n")
	f.Add("name==x = id")
	f.Fuzz(func(t *testing.T, text string) {
		entries := parseClientList("node", text)
		lines := 0
		for _, l := range strings.Split(text, "\n") {
			if strings.TrimSpace(l) != "" {
				lines++
			}
		}
		if len(entries) != lines {
			t.Fatalf("%d entries for %d lines", len(entries), lines)
		}
		for _, e := range entries {
			for _, v := range []string{e.id, e.addr, e.name, e.flags, e.cmd} {
				if !strings.Contains(text, v) {
					t.Fatalf("field %q is not in the text", v)
				}
			}
		}
	})
}

func TestParseClientList(t *testing.T) {
	got := parseClientList("n1", "id=3 addr=127.0.0.1:5000 name=shardis:ab:ring-1 flags=N cmd=get\nid=4 addr=127.0.0.1:5001 name= flags=S cmd=replconf\n")
	want := []clientEntry{
		{node: "n1", id: "3", addr: "127.0.0.1:5000", name: "shardis:ab:ring-1", flags: "N", cmd: "get"},
		{node: "n1", id: "4", addr: "127.0.0.1:5001", flags: "S", cmd: "replconf"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d entries, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if !got[1].ignorable() || got[0].ignorable() {
		t.Errorf("a replica link is ignored, a client is not")
	}
}

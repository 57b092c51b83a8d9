package runid

import (
	"strings"
	"testing"
)

// FuzzParse: the run_id of an INFO server reply is found wherever its
// line is, whatever the other lines hold (other fields, sections, lines
// that merely end in "run_id:..."), and what Parse returns from any text
// is the value of a run_id line of it.
func FuzzParse(f *testing.F) {
	f.Add("# Server\r\nredis_version:7.2.4\r\n", "0123456789abcdef0123456789abcdef01234567", "tcp_port:6379\r\n")
	f.Add("", "x", "")
	f.Add("master_run_id:zzz\r\n", "abc", "run_id:\r\n")
	f.Fuzz(func(t *testing.T, before, id, after string) {
		got := Parse(before + after)
		if got != "" && !strings.Contains(before+after, "run_id:"+got) {
			t.Fatalf("%q: run_id %q is not in the text", before+after, got)
		}
		if id == "" || strings.TrimSpace(id) != id || strings.Contains(id, "\n") {
			return
		}
		// A reply whose earlier lines carry no run_id line of their own.
		if Parse(before) != "" || strings.HasSuffix(before, "run_id:") {
			return
		}
		if !strings.HasSuffix(before, "\n") && before != "" {
			before += "\r\n"
		}
		info := before + "run_id:" + id + "\r\n" + after
		if got := Parse(info); got != id {
			t.Fatalf("%q: run_id %q, want %q", info, got, id)
		}
	})
}

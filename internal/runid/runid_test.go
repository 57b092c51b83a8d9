package runid

import "testing"

func TestParse(t *testing.T) {
	for _, tc := range []struct{ info, want string }{
		{"# Server\r\nredis_version:7.0.15\r\nrun_id:8f2c1a\r\ntcp_port:6379\r\n", "8f2c1a"},
		{"run_id:abc", "abc"},
		{"# Server\r\nrun_id:\r\n", ""},
		{"# Server\r\nredis_version:7.0.15\r\n", ""},
		{"", ""},
		{"xrun_id:nope\r\n", ""},
	} {
		if got := Parse(tc.info); got != tc.want {
			t.Errorf("Parse(%q) = %q, want %q", tc.info, got, tc.want)
		}
	}
}

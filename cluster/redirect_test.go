package cluster

import (
	"testing"
)

func TestParseRedirect(t *testing.T) {
	cases := []struct {
		msg, asked string
		want       Redirect
		ok         bool
	}{
		{"MOVED 3999 127.0.0.1:6381", "127.0.0.1:6379", Redirect{Moved, 3999, "127.0.0.1:6381"}, true},
		{"ASK 3999 127.0.0.1:6381", "127.0.0.1:6379", Redirect{Ask, 3999, "127.0.0.1:6381"}, true},
		{"-MOVED 0 10.0.0.1:7000", "", Redirect{Moved, 0, "10.0.0.1:7000"}, true},
		{"MOVED 16383 node-a.example:7000", "", Redirect{Moved, 16383, "node-a.example:7000"}, true},
		{"ASK 3999 :6380", "10.1.2.3:6379", Redirect{Ask, 3999, "10.1.2.3:6380"}, true},
		{"MOVED 3999 :6380", "[::1]:6379", Redirect{Moved, 3999, "[::1]:6380"}, true},
		{"MOVED 3999 :6380", "localhost", Redirect{Moved, 3999, "localhost:6380"}, true},
		{"MOVED 3999 ::1:6380", "", Redirect{Moved, 3999, "[::1]:6380"}, true},
		{"MOVED 3999 [::1]:6380", "", Redirect{Moved, 3999, "[::1]:6380"}, true},
		{"MOVED 3999 fe80::1:2:6380", "", Redirect{Moved, 3999, "[fe80::1:2]:6380"}, true},
		{"MOVED 3999 127.0.0.1:06381", "", Redirect{Moved, 3999, "127.0.0.1:6381"}, true},
		{"MOVED 03999 127.0.0.1:6381", "", Redirect{Moved, 3999, "127.0.0.1:6381"}, true},
		{"MOVED 1 [10.0.0.1]:80", "", Redirect{Moved, 1, "10.0.0.1:80"}, true},
		{"ASK 0 :1", "]0", Redirect{}, false}, // no usable host in asked
		{"ASK 0 :1", "a b:1", Redirect{}, false},

		{"MOVED 3999 :6380", "", Redirect{}, false},             // no host to fall back on
		{"MOVED 3999 ?:6380", "127.0.0.1:1", Redirect{}, false}, // unknown endpoint
		{"MOVED 16384 127.0.0.1:6381", "", Redirect{}, false},
		{"MOVED -1 127.0.0.1:6381", "", Redirect{}, false},
		{"MOVED +1 127.0.0.1:6381", "", Redirect{}, false},
		{"MOVED x 127.0.0.1:6381", "", Redirect{}, false},
		{"MOVED  127.0.0.1:6381", "", Redirect{}, false},
		{"MOVED 1 127.0.0.1:0", "", Redirect{}, false},
		{"MOVED 1 127.0.0.1:65536", "", Redirect{}, false},
		{"MOVED 1 127.0.0.1:+80", "", Redirect{}, false},
		{"MOVED 1 127.0.0.1:", "", Redirect{}, false},
		{"MOVED 1 127.0.0.1", "", Redirect{}, false},
		{"MOVED 1 [::1:80", "", Redirect{}, false},
		{"MOVED 1 ]:80", "", Redirect{}, false},
		{"MOVED 1 127.0.0.1:80 extra", "", Redirect{}, false},
		{"MOVED 1 127.0.0.1:80\r\n", "", Redirect{}, false},
		{"MOVED 1", "", Redirect{}, false},
		{"MOVED", "", Redirect{}, false},
		{"moved 1 127.0.0.1:80", "", Redirect{}, false},
		{"ASKING 1 127.0.0.1:80", "", Redirect{}, false},
		{"TRYAGAIN Multiple keys request during rehashing of slot", "", Redirect{}, false},
		{"CLUSTERDOWN Hash slot not served", "", Redirect{}, false},
		{"", "", Redirect{}, false},
	}
	for _, c := range cases {
		got, ok := ParseRedirect(c.msg, c.asked)
		if ok != c.ok || got != c.want {
			t.Errorf("ParseRedirect(%q, %q) = %+v, %v; want %+v, %v", c.msg, c.asked, got, ok, c.want, c.ok)
		}
	}
}

func TestParseRedirectDoesNotAllocate(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() {
		if _, ok := ParseRedirect("MOVED 3999 127.0.0.1:6381", "127.0.0.1:6379"); !ok {
			t.Fatal("not parsed")
		}
	})
	if allocs != 0 {
		t.Fatalf("ParseRedirect allocates %v times", allocs)
	}
}

func TestRedirectKindString(t *testing.T) {
	for k, want := range map[RedirectKind]string{Moved: "MOVED", Ask: "ASK", 0: "RedirectKind(0)", 7: "RedirectKind(7)"} {
		if got := k.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(k), got, want)
		}
	}
}

func TestErrorCode(t *testing.T) {
	cases := map[string]string{
		"MOVED 3999 127.0.0.1:6381":                                                        "MOVED",
		"ASK 3999 127.0.0.1:6381":                                                          "ASK",
		"-TRYAGAIN Multiple keys request during rehashing of slot":                         "TRYAGAIN",
		"CLUSTERDOWN The cluster is down":                                                  "CLUSTERDOWN",
		"LOADING Redis is loading the dataset in memory":                                   "LOADING",
		"MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.": "MASTERDOWN",
		"READONLY You can't write against a read only replica.":                            "READONLY",
		"CROSSSLOT Keys in request don't hash to the same slot":                            "CROSSSLOT",
		"ERR unknown command":                                                              "ERR",
		"NOPERM":                                                                           "NOPERM",
		"WRONG_TYPE-2 x":                                                                   "WRONG_TYPE-2",
		"":                                                                                 "",
		"-":                                                                                "",
		" MOVED":                                                                           "",
		"moved 1 a:1":                                                                      "",
		"Err x":                                                                            "",
		"MOVED\t1":                                                                         "",
	}
	for msg, want := range cases {
		if got := ErrorCode(msg); got != want {
			t.Errorf("ErrorCode(%q) = %q, want %q", msg, got, want)
		}
	}
}

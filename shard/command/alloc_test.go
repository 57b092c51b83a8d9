package command

import "testing"

func TestNoAllocations(t *testing.T) {
	get := Lookup("GET")
	getArgs := args("key")
	evalArgs := args("return 1", "2", "k1", "k2")
	xreadArgs := args("COUNT", 10, "STREAMS", "s1", "s2", "0", "0")
	objArgs := args([]byte("ENCODING"), "k")
	dst := make([]int, 0, 8)
	cases := []struct {
		name string
		fn   func()
	}{
		{"Lookup GET", func() { _ = Lookup("GET") }},
		{"Lookup get", func() { _ = Lookup("get") }},
		{"Lookup GeT", func() { _ = Lookup("GeT") }},
		{"Lookup object|ENCODING", func() { _ = Lookup("object|ENCODING") }},
		{"Lookup unknown", func() { _ = Lookup("NOSUCHCOMMAND") }},
		{"KeyPositions GET", func() { _, _ = get.KeyPositions(getArgs, dst[:0]) }},
		{"KeyPositions EVAL", func() { _, _ = Lookup("EVAL").KeyPositions(evalArgs, dst[:0]) }},
		{"KeyPositions XREAD", func() { _, _ = Lookup("XREAD").KeyPositions(xreadArgs, dst[:0]) }},
		{"KeyPositions OBJECT ENCODING", func() { _, _ = Lookup("OBJECT").KeyPositions(objArgs, dst[:0]) }},
		{"IsWrite", func() { _ = get.IsWrite() || get.HasKeys() }},
	}
	for _, tc := range cases {
		if n := testing.AllocsPerRun(200, tc.fn); n != 0 {
			t.Errorf("%s: %.1f allocations per call, want 0", tc.name, n)
		}
	}
	// The calls above really found the keys.
	if pos, err := get.KeyPositions(getArgs, dst[:0]); err != nil || len(pos) != 1 || pos[0] != 0 {
		t.Errorf("GET KeyPositions = %v, %v", pos, err)
	}
	if pos, err := Lookup("XREAD").KeyPositions(xreadArgs, dst[:0]); err != nil || len(pos) != 2 || pos[0] != 3 {
		t.Errorf("XREAD KeyPositions = %v, %v", pos, err)
	}
}

func BenchmarkKeyPositionsGET(b *testing.B) {
	info := Lookup("GET")
	a := args("key")
	dst := make([]int, 0, 4)
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = info.KeyPositions(a, dst[:0])
	}
}

func BenchmarkKeyPositionsEVAL(b *testing.B) {
	info := Lookup("EVAL")
	a := args("return 1", 3, "k1", "k2", "k3", "a1")
	dst := make([]int, 0, 4)
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = info.KeyPositions(a, dst[:0])
	}
}

func BenchmarkKeyPositionsXREAD(b *testing.B) {
	info := Lookup("XREAD")
	a := args("COUNT", 10, "BLOCK", 100, "STREAMS", "s1", "s2", "0", "0")
	dst := make([]int, 0, 4)
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = info.KeyPositions(a, dst[:0])
	}
}

func BenchmarkLookup(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = Lookup("ZUNIONSTORE")
	}
}

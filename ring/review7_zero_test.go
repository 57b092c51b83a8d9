package ring

import (
	"errors"
	"testing"
)

// TestReview7ZeroRingDoesNotPanic: the zero Ring (a Ring not built by New,
// as in a struct field left unset) has no shard. Locate and LocateBytes
// indexed an empty owners table and panicked, and Diff and DiffKeys with
// such a ring did too; they now answer -1 (no shard) and the zero
// Movement.
func TestReview7ZeroRingDoesNotPanic(t *testing.T) {
	var zero Ring
	built, err := New(Config{Shards: []Shard{{Addr: "10.0.0.1:6379", Weight: 1}, {Addr: "10.0.0.2:6379", Weight: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"", "a", "{user1}.x", "a key long enough to need more than one hash block"} {
		if got := zero.Locate(key); got != -1 {
			t.Errorf("zero Ring: Locate(%q) = %d, want -1", key, got)
		}
		if got := zero.LocateBytes([]byte(key)); got != -1 {
			t.Errorf("zero Ring: LocateBytes(%q) = %d, want -1", key, got)
		}
	}
	if n := zero.Len(); n != 0 {
		t.Errorf("zero Ring: Len = %d, want 0", n)
	}
	if n := zero.Points(); n != 0 {
		t.Errorf("zero Ring: Points = %d, want 0", n)
	}
	if s := zero.Shards(); len(s) != 0 {
		t.Errorf("zero Ring: Shards = %v, want none", s)
	}
	if _, ok := zero.Shard(0); ok {
		t.Error("zero Ring: Shard(0) found a shard")
	}
	if s := zero.String(); s == "" {
		t.Error("zero Ring: String is empty")
	}
	if _, err := zero.Without(); !errors.Is(err, ErrNoShards) {
		t.Errorf("zero Ring: Without() = %v, want ErrNoShards", err)
	}
	for _, c := range []struct {
		name     string
		old, new *Ring
	}{{"zero, zero", &zero, &zero}, {"zero, built", &zero, built}, {"built, zero", built, &zero}} {
		if m := Diff(c.old, c.new); m != (Movement{}) {
			t.Errorf("Diff(%s) = %+v, want the zero Movement", c.name, m)
		}
		if m := DiffKeys(c.old, c.new, []string{"a", "b"}); m != (Movement{}) {
			t.Errorf("DiffKeys(%s) = %+v, want the zero Movement", c.name, m)
		}
	}
}

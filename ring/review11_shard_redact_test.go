package ring

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestReview11ShardOutputHidesCredentials: a Shard printed or encoded
// showed credentials pasted into its address (fmt.Println of a []Shard
// printed "redis://u:secret@127.0.0.1:6379:1 a", %#v and JSON the same
// address) although New and ParseShards refuse them and quote them
// redacted. Every output now shows "xxxxx@host:port".
func TestReview11ShardOutputHidesCredentials(t *testing.T) {
	shards := []Shard{
		{Name: "a", Addr: "redis://u:secret@127.0.0.1:6379", Weight: 1},
		{Addr: "u:secret@127.0.0.1:6380", Weight: 2},
	}
	cfg := Config{Algorithm: Murmur3, Shards: shards}
	out := map[string]string{
		"String":  shards[0].String() + " " + shards[1].String(),
		"Sprint":  fmt.Sprint(shards),
		"%v":      fmt.Sprintf("%v", shards),
		"%+v":     fmt.Sprintf("%+v", shards),
		"%#v":     fmt.Sprintf("%#v", shards),
		"%s":      fmt.Sprintf("%s", shards),
		"cfg %v":  fmt.Sprintf("%v", cfg),
		"cfg %+v": fmt.Sprintf("%+v", cfg),
		"cfg %#v": fmt.Sprintf("%#v", cfg),
		"Format":  FormatShards(shards),
	}
	for name, v := range map[string]any{"shards": shards, "config": cfg, "fields": struct{ A, B Shard }{shards[0], shards[1]}} {
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("JSON of %s: %v", name, err)
		}
		out["JSON "+name] = string(j)
		y, err := yaml.Marshal(v)
		if err != nil {
			t.Fatalf("YAML of %s: %v", name, err)
		}
		out["YAML "+name] = string(y)
	}
	for name, s := range out {
		if strings.Contains(s, "secret") || strings.Contains(s, "u:") {
			t.Errorf("%s shows the credentials: %s", name, s)
		}
		if !strings.Contains(s, "xxxxx@127.0.0.1:6379") || !strings.Contains(s, "xxxxx@127.0.0.1:6380") {
			t.Errorf("%s lost the redacted addresses: %s", name, s)
		}
	}
	// The values themselves keep their addresses: New refuses them, and
	// quotes them redacted.
	if shards[0].Addr != "redis://u:secret@127.0.0.1:6379" || shards[1].Label() != "u:secret@127.0.0.1:6380" {
		t.Errorf("printing changed the shards: %q", []string{shards[0].Addr, shards[1].Label()})
	}
	_, err := New(cfg)
	if !errors.Is(err, ErrBadShard) || strings.Contains(err.Error(), "secret") {
		t.Errorf("New with credentials in an address = %v, want ErrBadShard quoting it redacted", err)
	}
}

// TestReview11ShardOutputWithoutCredentials: a shard without
// credentials prints and encodes exactly as before.
func TestReview11ShardOutputWithoutCredentials(t *testing.T) {
	s := Shard{Name: "a", Addr: "[::1]:6379", Weight: 3}
	for _, c := range []struct{ got, want string }{
		{s.String(), "[::1]:6379:3 a"},
		{fmt.Sprintf("%v", s), "[::1]:6379:3 a"},
		{fmt.Sprintf("%+v", []Shard{s, {Addr: "h:1", Weight: 1}}), "[[::1]:6379:3 a h:1:1]"},
		{fmt.Sprintf("%#v", s), `ring.Shard{Name:"a", Addr:"[::1]:6379", Weight:3}`},
		{fmt.Sprintf("%#v", Shard{Name: "q\"\n", Addr: "h:1"}), `ring.Shard{Name:"q\"\n", Addr:"h:1", Weight:0}`},
		{mustJSON(t, s), `{"Name":"a","Addr":"[::1]:6379","Weight":3}`},
		{mustYAML(t, s), "name: a\naddr: '[::1]:6379'\nweight: 3\n"},
	} {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
	var back []Shard
	if err := json.Unmarshal([]byte(mustJSON(t, []Shard{s})), &back); err != nil || len(back) != 1 || back[0] != s {
		t.Errorf("JSON round trip: %v, %v", back, err)
	}
	if err := yaml.Unmarshal([]byte(mustYAML(t, []Shard{s})), &back); err != nil || len(back) != 1 || back[0] != s {
		t.Errorf("YAML round trip: %v, %v", back, err)
	}
}

// TestReview11ShardOutputKeepsPlacement: the shards of every frozen case,
// written out (FormatShards, JSON, YAML) and read back, build rings that
// place every frozen key where the files say: output changes nothing the
// ring hashes.
func TestReview11ShardOutputKeepsPlacement(t *testing.T) {
	files, err := filepath.Glob("testdata/frozen_*.tsv")
	if err != nil || len(files) != 5 {
		t.Fatalf("frozen files %v, %v; want 5", files, err)
	}
	for _, path := range files {
		v := readVectors(t, filepath.Base(path))
		if len(v.rows) < 5000 {
			t.Fatalf("%s: %d rows, want at least 5000", path, len(v.rows))
		}
		cases := frozenCases(t, v)
		for ci, c := range cases {
			fromText, err := ParseShards(FormatShards(c.cfg.Shards))
			if err != nil {
				t.Fatalf("case %s: %v", c.name, err)
			}
			var fromJSON, fromYAML []Shard
			if err := json.Unmarshal([]byte(mustJSON(t, c.cfg.Shards)), &fromJSON); err != nil {
				t.Fatalf("case %s: %v", c.name, err)
			}
			if err := yaml.Unmarshal([]byte(mustYAML(t, c.cfg.Shards)), &fromYAML); err != nil {
				t.Fatalf("case %s: %v", c.name, err)
			}
			for how, shards := range map[string][]Shard{"text": fromText, "JSON": fromJSON, "YAML": fromYAML} {
				cfg := c.cfg
				cfg.Shards = shards
				r, err := New(cfg)
				if err != nil {
					t.Fatalf("case %s from %s: %v", c.name, how, err)
				}
				bad := 0
				for i, row := range v.rows {
					if len(row) != len(cases)+1 {
						t.Fatalf("row %d has %d fields, want %d", i, len(row), len(cases)+1)
					}
					want, err := strconv.Atoi(row[ci+1])
					if err != nil {
						t.Fatalf("row %d: %v", i, err)
					}
					if got := r.LocateBytes(unhex(t, row[0])); got != want {
						bad++
					}
				}
				if bad > 0 {
					t.Errorf("case %s from %s: %d of %d keys moved", c.name, how, bad, len(v.rows))
				}
			}
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustYAML(t *testing.T, v any) string {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

package ring

import (
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// frozenCase is one column of a testdata/frozen_*.tsv file: a ring
// configuration and the shard every key of the file goes to.
type frozenCase struct {
	name string
	cfg  Config
}

// # case NAME: algorithm=A key_hash=H tag=T shards=LIST
var frozenCaseLine = regexp.MustCompile(`^# case (\S+): algorithm=(\S+) key_hash=(\S+) tag=(\S+) shards=(.+)$`)

func frozenCases(t *testing.T, v vectorFile) []frozenCase {
	t.Helper()
	var cases []frozenCase
	var columns []string
	for _, h := range v.header {
		if rest, ok := strings.CutPrefix(h, "# columns: key_hex<TAB>"); ok {
			columns = strings.Split(rest, "<TAB>")
		}
		m := frozenCaseLine.FindStringSubmatch(h)
		if m == nil {
			continue
		}
		shards, err := ParseShards(m[5])
		if err != nil {
			t.Fatalf("case %s: %v", m[1], err)
		}
		cases = append(cases, frozenCase{m[1], Config{Algorithm: Algorithm(m[2]), KeyHash: m[3], Tag: m[4], Shards: shards}})
	}
	if len(cases) == 0 || len(columns) != len(cases) {
		t.Fatalf("%d cases, %d columns", len(cases), len(columns))
	}
	for i, c := range cases {
		if columns[i] != c.name {
			t.Fatalf("column %d is %q, case line says %q", i+1, columns[i], c.name)
		}
	}
	return cases
}

// TestFrozenPlacement holds every algorithm, key hash and tag rule to the
// placement frozen in testdata/frozen_*.tsv. These files were produced once
// and stand forever: a failure here means users' keys would move.
func TestFrozenPlacement(t *testing.T) {
	wantAlgs := map[string]bool{"murmur3": true, "jedis": true, "jedis-legacy": true, "ketama": true, "modula": true}
	files, err := filepath.Glob("testdata/frozen_*.tsv")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(wantAlgs) {
		t.Fatalf("frozen files %v, want one per algorithm", files)
	}
	seen := map[string]bool{} // algorithm/key hash/tag combinations covered
	for _, path := range files {
		name := filepath.Base(path)
		alg := strings.TrimSuffix(strings.TrimPrefix(name, "frozen_"), ".tsv")
		t.Run(alg, func(t *testing.T) {
			if !wantAlgs[alg] {
				t.Fatalf("unexpected file %s", name)
			}
			v := readVectors(t, name)
			if !headerSays(v.header, "FROZEN: NEVER regenerate") || !headerSays(v.header, "at commit ") {
				t.Fatal("header lost its provenance or its warning")
			}
			if len(v.rows) < 5000 {
				t.Fatalf("%d rows, want at least 5000", len(v.rows))
			}
			cases := frozenCases(t, v)
			for ci, c := range cases {
				if string(c.cfg.Algorithm) != alg {
					t.Fatalf("case %s: algorithm %s in file %s", c.name, c.cfg.Algorithm, name)
				}
				r, err := New(c.cfg)
				if err != nil {
					t.Fatalf("case %s: %v", c.name, err)
				}
				got := r.Config()
				if got.KeyHash != c.cfg.KeyHash || got.Tag != c.cfg.Tag {
					t.Fatalf("case %s: ring reports key hash %s tag %s", c.name, got.KeyHash, got.Tag)
				}
				seen[alg+"/"+got.KeyHash+"/"+got.Tag] = true
				bad := 0
				for i, row := range v.rows {
					if len(row) != len(cases)+1 {
						t.Fatalf("row %d has %d fields, want %d", i, len(row), len(cases)+1)
					}
					want, err := strconv.Atoi(row[ci+1])
					if err != nil {
						t.Fatalf("row %d: %v", i, err)
					}
					key := unhex(t, row[0])
					gb, gs := r.LocateBytes(key), r.Locate(string(key))
					if gb != want || gs != want {
						if bad++; bad <= 5 {
							t.Errorf("case %s, key %q: LocateBytes %d, Locate %d, frozen %d", c.name, key, gb, gs, want)
						}
					}
				}
				if bad > 0 {
					t.Errorf("case %s: %d of %d keys moved", c.name, bad, len(v.rows))
				}
			}
		})
	}
	// Every key hash of every algorithm, and every kind of tag rule, is pinned.
	for _, a := range []struct {
		alg    string
		hashes map[string]keyHash
	}{{"murmur3", murmur3Hashes}, {"jedis", jedisHashes}, {"jedis-legacy", jedisHashes}, {"ketama", twemHashes}, {"modula", twemHashes}} {
		for h := range a.hashes {
			if !slices.ContainsFunc(slices.Collect(maps.Keys(seen)), func(s string) bool { return strings.HasPrefix(s, a.alg+"/"+h+"/") }) {
				t.Errorf("no frozen vectors for %s with key hash %s", a.alg, h)
			}
		}
		for _, tag := range []string{"none", "cluster", "jedis"} {
			if !slices.ContainsFunc(slices.Collect(maps.Keys(seen)), func(s string) bool {
				return strings.HasPrefix(s, a.alg+"/") && strings.HasSuffix(s, "/"+tag)
			}) {
				t.Errorf("no frozen vectors for %s with tag rule %s", a.alg, tag)
			}
		}
	}
}

package ring

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// vectorFile is a golden TSV file: '#' header lines, then tab-separated rows.
type vectorFile struct {
	header []string
	rows   [][]string
}

func readVectors(t testing.TB, name string) vectorFile {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var v vectorFile
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			v.header = append(v.header, line)
			continue
		}
		v.rows = append(v.rows, strings.Split(line, "\t"))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(v.rows) == 0 {
		t.Fatalf("%s: no rows", name)
	}
	return v
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var (
	// #   0: new JedisShardInfo("127.0.0.1", 6381, 2000, 2000, 1)  name=null weight=1 -> ...
	// #   0: new JedisShardInfo("127.0.0.1", "shard-a", 6381, 2000, 2)  name="shard-a" weight=2 -> ...
	jedisShardLine = regexp.MustCompile(`^#\s+(\d+): new JedisShardInfo\(([^)]*)\)\s+name=(null|"[^"]*") weight=(\d+)`)
	// #   0: "127.0.0.1:6379:1"  -> continuum name "127.0.0.1:6379", ...
	twemServerLine = regexp.MustCompile(`^#\s+(\d+): "([^"]+)"\s+->`)
)

// jedisShardsFromHeader rebuilds the shard list a Jedis placement file
// describes.
func jedisShardsFromHeader(t testing.TB, header []string) []Shard {
	t.Helper()
	var shards []Shard
	for _, h := range header {
		m := jedisShardLine.FindStringSubmatch(h)
		if m == nil {
			continue
		}
		if idx, _ := strconv.Atoi(m[1]); idx != len(shards) {
			t.Fatalf("shard lines out of order at %q", h)
		}
		args := strings.Split(m[2], ", ")
		host := strings.Trim(args[0], `"`)
		var name, port string
		if strings.HasPrefix(args[1], `"`) {
			name, port = strings.Trim(args[1], `"`), args[2]
		} else {
			port = args[1]
		}
		if m[3] != "null" && strings.Trim(m[3], `"`) != name {
			t.Fatalf("name mismatch in %q", h)
		}
		w, _ := strconv.Atoi(m[4])
		shards = append(shards, Shard{Name: name, Addr: host + ":" + port, Weight: w})
	}
	if len(shards) == 0 {
		t.Fatal("no shard lines in header")
	}
	return shards
}

// twemShardsFromHeader rebuilds the server list of a twemproxy placement
// file.
func twemShardsFromHeader(t testing.TB, header []string) []Shard {
	t.Helper()
	var entries []string
	for _, h := range header {
		if m := twemServerLine.FindStringSubmatch(h); m != nil {
			entries = append(entries, m[2])
		}
	}
	shards, err := ParseShards(strings.Join(entries, ","))
	if err != nil {
		t.Fatal(err)
	}
	return shards
}

func headerSays(header []string, want string) bool {
	for _, h := range header {
		if strings.Contains(h, want) {
			return true
		}
	}
	return false
}

func TestMurmur64AVectors(t *testing.T) {
	v := readVectors(t, "murmur64a.tsv")
	for i, row := range v.rows {
		key := unhex(t, row[0])
		want, err := strconv.ParseInt(row[1], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		if got := int64(murmur64A(key)); got != want {
			t.Errorf("row %d %q: murmur64A = %d, want %d", i, row[0], got, want)
		}
		// The ring position keeps the signed order.
		if got := int64(khJedisMurmur.position(key) ^ signBit); got != want {
			t.Errorf("row %d: position does not round-trip", i)
		}
	}
	t.Logf("%d rows", len(v.rows))
}

func TestTwemproxyHashVectors(t *testing.T) {
	for _, tc := range []struct {
		file string
		fn   func([]byte) uint32
	}{
		{"hash_fnv1a_64.tsv", twemFNV1a_64},
		{"hash_md5.tsv", twemMD5},
	} {
		t.Run(tc.file, func(t *testing.T) {
			v := readVectors(t, tc.file)
			for i, row := range v.rows {
				key := unhex(t, row[0])
				want, err := strconv.ParseUint(row[2], 10, 32)
				if err != nil {
					t.Fatal(err)
				}
				if hx := fmt.Sprintf("%08x", want); hx != row[3] {
					t.Fatalf("row %d: decimal and hex columns disagree", i)
				}
				if got := tc.fn(key); got != uint32(want) {
					t.Errorf("row %d %s: got %d, want %d", i, row[1], got, want)
				}
			}
		})
	}
}

func TestJedisPlacementVectors(t *testing.T) {
	files, err := filepath.Glob("testdata/placement-*.tsv")
	if err != nil || len(files) == 0 {
		t.Fatalf("no placement files: %v", err)
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			v := readVectors(t, name)
			if !headerSays(v.header, "key tags: disabled") {
				t.Fatal("header does not say key tags are disabled; the test needs the tag rule")
			}
			if !headerSays(v.header, "# columns: key<TAB>shard_index<TAB>shard_label") {
				t.Fatal("unexpected columns")
			}
			shards := jedisShardsFromHeader(t, v.header)
			r, err := New(Config{Algorithm: Jedis, Shards: shards})
			if err != nil {
				t.Fatal(err)
			}
			if r.Config().Tag != "none" || r.Config().KeyHash != "murmur" {
				t.Fatalf("defaults: %+v", r.Config())
			}
			for i, row := range v.rows {
				want, _ := strconv.Atoi(row[1])
				got := r.Locate(row[0])
				if got != want || shards[got].Label() != row[2] {
					t.Errorf("row %d %q: got %d (%s), want %d (%s)", i, row[0], got, shards[got].Label(), want, row[2])
				}
				if b := r.LocateBytes([]byte(row[0])); b != got {
					t.Errorf("row %d: LocateBytes %d != Locate %d", i, b, got)
				}
			}
			t.Logf("%d shards, %d points, %d rows", len(shards), r.Points(), len(v.rows))
		})
	}
}

func TestKetamaPlacementVectors(t *testing.T) {
	v := readVectors(t, "placement_3plain_ketama_fnv1a_64.tsv")
	if !headerSays(v.header, "distribution: ketama, hash: fnv1a_64, hash_tag: none") {
		t.Fatal("unexpected pool config in header")
	}
	shards := twemShardsFromHeader(t, v.header)
	if len(shards) != 3 {
		t.Fatalf("got %d servers from header", len(shards))
	}
	r, err := New(Config{Algorithm: Ketama, Shards: shards})
	if err != nil {
		t.Fatal(err)
	}
	if r.Points() != 480 {
		t.Errorf("points = %d, want 480 (header total)", r.Points())
	}
	for i, row := range v.rows {
		key := unhex(t, row[0])
		hash, _ := strconv.ParseUint(row[2], 10, 32)
		want, _ := strconv.Atoi(row[3])
		if got := khFNV1a_64.position(key); got != hash {
			t.Errorf("row %d %s: hash %d, want %d", i, row[1], got, hash)
		}
		got := r.LocateBytes(key)
		if got != want || continuumName(shards[got]) != row[4] {
			t.Errorf("row %d %s: got %d, want %d (%s)", i, row[1], got, want, row[4])
		}
		if s := r.Locate(string(key)); s != got {
			t.Errorf("row %d: Locate %d != LocateBytes %d", i, s, got)
		}
	}
	t.Logf("%d rows", len(v.rows))
}

// TestKetamaPlacementVectorsAnyOrder lists the reference file's servers in
// every order: twemproxy sorts its servers by continuum name before building
// the continuum, so each key must stay on the same server, whose index moves
// with the permutation.
func TestKetamaPlacementVectorsAnyOrder(t *testing.T) {
	v := readVectors(t, "placement_3plain_ketama_fnv1a_64.tsv")
	sorted := twemShardsFromHeader(t, v.header)
	if len(sorted) != 3 {
		t.Fatalf("got %d servers from header", len(sorted))
	}
	for _, perm := range [][]int{{2, 1, 0}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {1, 0, 2}} {
		shards := make([]Shard, len(perm))
		for i, p := range perm {
			shards[i] = sorted[p] // position i of the new list holds reference server p
		}
		r, err := New(Config{Algorithm: Ketama, Shards: shards})
		if err != nil {
			t.Fatal(err)
		}
		for i, row := range v.rows {
			ref, _ := strconv.Atoi(row[3])
			got := r.LocateBytes(unhex(t, row[0]))
			if perm[got] != ref || continuumName(shards[got]) != row[4] {
				t.Errorf("order %v, row %d %s: server %d (%s), want reference server %d (%s)",
					perm, i, row[1], got, continuumName(shards[got]), ref, row[4])
			}
		}
	}
}

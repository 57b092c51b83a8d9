package shard

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/shardis/shardis/hashtag"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard/command"
)

// routerLocator locates keys with a user's Router; a key's group is its
// node. The map from addresses to node indexes is rebuilt when the router
// names a node it has not seen.
type routerLocator struct {
	r     Router
	nodes *nodeTable
	index atomic.Pointer[map[string]int]
}

func newRouterLocator(r Router, nodes *nodeTable) *routerLocator {
	l := &routerLocator{r: r, nodes: nodes}
	idx := map[string]int{}
	for _, n := range r.Nodes() {
		idx[n.Addr] = nodes.add(n)
	}
	l.index.Store(&idx)
	return l
}

func (l *routerLocator) locate(key any) (int, int, error) {
	k, ok := command.Arg(key)
	if !ok {
		return -1, -1, fmt.Errorf("%w: key of type %T", ErrBadCommand, key)
	}
	n, err := l.r.Route(k)
	if err != nil {
		return -1, -1, err
	}
	if i, ok := (*l.index.Load())[n.Addr]; ok {
		return i, i, nil
	}
	if n.Addr == "" {
		return -1, -1, fmt.Errorf("%w: the Router returned node %q without an address", ErrBadConfig, n.Name)
	}
	i := l.nodes.add(n)
	old := *l.index.Load()
	idx := make(map[string]int, len(old)+1)
	for a, j := range old {
		idx[a] = j
	}
	idx[n.Addr] = i
	l.index.Store(&idx)
	return i, i, nil
}

func (l *routerLocator) groupLabel(group int) string {
	if group < 0 {
		return "?"
	}
	return l.nodes.get(group).node.String()
}

// mappedRingLocator is ringLocator for a ring whose configured indexes
// are not the client's node indexes (a ring installed by a migration).
type mappedRingLocator struct {
	rr  *RingRouter
	idx []int // configured index -> node index
}

func (l mappedRingLocator) locate(key any) (int, int, error) {
	i, _, err := ringLocator{rr: l.rr}.locate(key)
	if err != nil {
		return -1, -1, err
	}
	return l.idx[i], l.idx[i], nil
}

func (l mappedRingLocator) groupLabel(group int) string {
	for i, n := range l.idx {
		if n == group {
			return l.rr.node(i).String()
		}
	}
	return "?"
}

// TopologyIDer is implemented by a Router that names its own placement:
// two processes whose routers have the same ID place every key alike.
// TopologyID replaces spaces, other characters that are not printable
// ASCII, and '>' (which separates a migration's sides in connection names)
// by '_'. The connection names' own forms are refused (ErrBadConfig, by
// Validate, New and StartMigration): an empty ID, "cluster" and IDs
// beginning with "cluster-" (the fence and the mover take every such name
// for a Redis Cluster, whatever seeds it was named by), and IDs beginning
// with "migrating:", "fenced:" or "armed:" (a beacon's phase).
// Without it a Router is named after its nodes' addresses, so two
// placements over the same nodes share a name, and a migration between
// them is refused: such a Router must implement it.
type TopologyIDer interface {
	TopologyID() string
}

// TopologyID returns a short name of the placement cfg describes: two
// configs with the same ID put every key on the same node. Processes name
// their connections with it (CLIENT SETNAME), so that the mover can tell
// which topology each process routes by. A ring's ID depends on its
// placement, not on how the config spells it: a Hash, KeyHash or Tag left
// unset and the same setting written out ("murmur3", "murmur3",
// "cluster"), or the tag pair "{}" and "cluster", give one ID; so do a
// shard's empty Name and the name the algorithm places it by when the
// Name is empty (its address for murmur3, ketama and modula, the host
// alone for a ketama or modula server on port 11211), ketama weights that
// earn the same continuum points (1,1,1 and 2,2,2), and for modula, which
// places by nothing but the order of those names, any names that keep it.
// Nor does it depend on the order of the shard list where that order
// places no key: murmur3 and ketama shards, and named jedis and
// jedis-legacy shards among themselves (unnamed jedis shards are placed by
// their position, which the ID keeps), give one ID in any order, the one
// the list has in its natural order (shard-2 before shard-10, 10.0.0.9
// before 10.0.0.10). A jedis list of named shards not in that order is
// built as a ring (as New builds it) to make sure that no two of its
// points share a position, where the later shard of the list wins; if two
// do, the list's order places keys and the ID keeps it.
//
// For a Config with a Router, TopologyID runs the Router's code (its
// TopologyID when it is a TopologyIDer, else its Nodes) in the caller's
// goroutine and does not recover a panic of it: the panic reaches the
// caller. Validate, New and StartMigration, which work the ID out the same
// way, return such a panic as an error matching ErrBadConfig and
// *PanicError: call Validate first to have it as an error.
func TopologyID(cfg Config) string {
	h := fnv.New64a()
	switch {
	case cfg.Router != nil:
		if t, ok := cfg.Router.(TopologyIDer); ok {
			return sanitizeName(t.TopologyID())
		}
		fmt.Fprintf(h, "router")
		for _, n := range cfg.Router.Nodes() {
			fmt.Fprintf(h, "|%s", n.Addr)
		}
		return fmt.Sprintf("router-%x", h.Sum64())
	case cfg.Mode == ModeCluster:
		seeds := slices.Clone(cfg.Seeds)
		slices.Sort(seeds)
		fmt.Fprintf(h, "cluster|%s", strings.Join(seeds, ","))
		return fmt.Sprintf("cluster-%x", h.Sum64())
	default:
		rc := cfg.RingConfig()
		filled, err := rc.WithDefaults()
		alg, keyHash, tag := placementSettings(rc, filled, err)
		fmt.Fprintf(h, "ring|%s|%s|%s", alg, keyHash, tag)
		for _, s := range placementShards(rc, filled.Algorithm, err) {
			fmt.Fprintf(h, "|%s=%s*%d", s.Name, s.Addr, s.Weight)
		}
		return fmt.Sprintf("ring-%x", h.Sum64())
	}
}

// placementSettings returns rc's algorithm, key hash and tag rule in one
// spelling per placement, for TopologyID, from filled (rc.WithDefaults(),
// whose error is err): each with its default filled in, the tag pair
// "{}" as "cluster" (they hash alike, see hashtag.Pair), and then every
// setting that is its algorithm's default written "" (and murmur3 itself
// ""), so that a config that leaves them unset keeps the ID it always
// had. A setting that ring.New refuses is kept as written: such a config
// does not validate, and its ID names no placement. No ring is built for
// the settings (Config.String shows a migration's old topology by its
// ID); placementShards builds one only for a jedis list of named shards
// out of their natural order.
func placementSettings(rc, filled ring.Config, err error) (alg, keyHash, tag string) {
	if err != nil {
		return string(rc.Algorithm), rc.KeyHash, rc.Tag
	}
	def, err := ring.Config{Algorithm: filled.Algorithm}.WithDefaults()
	if err != nil {
		return string(rc.Algorithm), rc.KeyHash, rc.Tag
	}
	c := filled
	if c.Tag == "{}" { // hashtag.Pair('{', '}'), which hashes as hashtag.Cluster
		c.Tag = hashtag.Cluster.String()
	}
	if c.Algorithm != ring.Murmur3 {
		alg = string(c.Algorithm)
	}
	if c.KeyHash != def.KeyHash {
		keyHash = c.KeyHash
	}
	if c.Tag != def.Tag {
		tag = c.Tag
	}
	return alg, keyHash, tag
}

// placementShards returns rc's shards as TopologyID names them: each Name
// as algorithm alg uses it to place keys (package ring's documentation), in
// one spelling per placement, the empty Name where it places as an empty
// one does, so that a config that leaves names unset keeps its ID; and in
// one order per placement where the list's order places nothing, the
// natural order of the names that place (naturalCompare), which is the
// order most configs list their shards in, so that they keep the ID that
// the list's own order gave them:
//   - murmur3 places a shard by its label, Name else Addr, and never by
//     its position (ties go to the smaller label): a Name equal to the
//     address is the empty one, and the shards are listed by label;
//   - ketama by its continuum name (Name, else the address, else the host
//     when the port is 11211) and by the point counts of the weights, not
//     the weights (ketamaWeights), its servers taken in the order of the
//     continuum names: a Name equal to the empty Name's continuum name is
//     the empty one, and the shards are listed by continuum name;
//   - modula by nothing but the order of the continuum names, which
//     decides whose slots come first: the shards are listed in that order,
//     unnamed;
//   - jedis and jedis-legacy place an unnamed shard by its list position
//     and a named one by its Name, which no Name spells otherwise: names
//     are kept as written, unnamed shards where they are, and the named
//     ones are listed by name in the places they hold (jedisOrder).
//
// With err (the settings do not validate) the shards are kept as written.
func placementShards(rc ring.Config, alg ring.Algorithm, err error) []ring.Shard {
	shards := rc.Shards
	if err != nil {
		return shards
	}
	out := slices.Clone(shards)
	switch alg {
	case ring.Murmur3:
		for i, s := range out {
			if s.Name == s.Addr {
				out[i].Name = ""
			}
		}
		// Stable: two shards with one label (a config that does not
		// validate) keep their order.
		slices.SortStableFunc(out, func(a, b ring.Shard) int { return naturalCompare(a.Label(), b.Label()) })
	case ring.Ketama:
		for i, s := range out {
			if s.Name == continuumName(ring.Shard{Addr: s.Addr}) {
				out[i].Name = ""
			}
		}
		ketamaWeights(out)
		slices.SortStableFunc(out, func(a, b ring.Shard) int { return naturalCompare(continuumName(a), continuumName(b)) })
	case ring.Modula:
		names := make(map[ring.Shard]string, len(out))
		for _, s := range out {
			names[s] = continuumName(s)
		}
		// Stable: two shards with one continuum name (a config that does
		// not validate) keep their order.
		slices.SortStableFunc(out, func(a, b ring.Shard) int {
			na, nb := names[a], names[b]
			if len(na) != len(nb) {
				return len(na) - len(nb)
			}
			return strings.Compare(na, nb)
		})
		for i := range out {
			out[i].Name = ""
		}
	case ring.Jedis, ring.JedisLegacy:
		jedisOrder(rc, out)
	}
	return out
}

// jedisOrder lists the named shards of a jedis or jedis-legacy ring by
// name (naturalCompare) in the places of the list that they hold, the
// unnamed ones staying where they are. Jedis places a named shard's
// points by its name and weight alone, so the order of the named shards
// decides nothing but which of two points at one position wins (the
// later one): the shards are reordered only when the ring holds no such
// tie, every point of every shard at a position of its own, which takes
// building the ring (as New does) when two or more shards are named. A
// config that does not build is kept as written.
func jedisOrder(rc ring.Config, shards []ring.Shard) {
	var places []int
	for i, s := range shards {
		if s.Name != "" {
			places = append(places, i)
		}
	}
	if len(places) < 2 {
		return
	}
	named := make([]ring.Shard, len(places))
	for k, i := range places {
		named[k] = shards[i]
	}
	sorted := slices.SortedStableFunc(slices.Values(named), func(a, b ring.Shard) int { return naturalCompare(a.Name, b.Name) })
	if slices.Equal(sorted, named) {
		return // already in order: no ring to build
	}
	if !jedisTieFree(rc) {
		return
	}
	for k, i := range places {
		shards[i] = sorted[k]
	}
}

// jedisTieFree reports whether rc builds a ring whose points all hold a
// position of their own. Building the ring takes tens of milliseconds for
// large rings, and TopologyID (so Config.String, New and StartMigration)
// asks about the same config again and again: the answers are kept,
// keyed by a digest of everything ring.New reads from rc, for the last
// jedisTieCacheSize configs asked about.
func jedisTieFree(rc ring.Config) bool {
	key := jedisTieKey(rc)
	jedisTies.mu.Lock()
	free, ok := jedisTies.m[key]
	jedisTies.mu.Unlock()
	if ok {
		return free
	}
	free = false
	if r, err := ring.New(rc); err == nil {
		points := 0
		for _, s := range rc.Shards {
			points += s.Weight * ring.JedisPointsPerWeight
		}
		free = r.Points() == points // else points collided: the list's order breaks the tie
	}
	jedisTies.mu.Lock()
	if len(jedisTies.m) >= jedisTieCacheSize {
		clear(jedisTies.m)
	}
	jedisTies.m[key] = free
	jedisTies.mu.Unlock()
	return free
}

// jedisTieCacheSize bounds the answers jedisTieFree keeps.
const jedisTieCacheSize = 64

// jedisTies holds jedisTieFree's answers.
var jedisTies = struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]bool
}{m: make(map[[sha256.Size]byte]bool)}

// jedisTieKey is a digest of rc's settings and shards, in list order, each
// string prefixed by its length so that no two configs read alike.
func jedisTieKey(rc ring.Config) [sha256.Size]byte {
	h := sha256.New()
	var buf []byte
	str := func(s string) {
		buf = binary.AppendUvarint(buf, uint64(len(s)))
		buf = append(buf, s...)
	}
	str(string(rc.Algorithm))
	str(rc.KeyHash)
	str(rc.Tag)
	buf = binary.AppendUvarint(buf, uint64(len(rc.Shards)))
	for _, s := range rc.Shards {
		str(s.Name)
		str(s.Addr)
		buf = binary.AppendVarint(buf, int64(s.Weight))
		if len(buf) > 4096 {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(buf)
	var key [sha256.Size]byte
	h.Sum(key[:0])
	return key
}

// naturalCompare orders names as people list them: runs of digits by
// their value (shard-2 before shard-10, 10.0.0.9 before 10.0.0.10), the
// rest bytewise; names that this leaves equal ("a01" and "a1") bytewise.
func naturalCompare(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if isDigit(a[i]) && isDigit(b[j]) {
			ei, ej := i, j
			for ei < len(a) && isDigit(a[ei]) {
				ei++
			}
			for ej < len(b) && isDigit(b[ej]) {
				ej++
			}
			da := strings.TrimLeft(a[i:ei], "0")
			db := strings.TrimLeft(b[j:ej], "0")
			if c := cmp.Compare(len(da), len(db)); c != 0 {
				return c
			}
			if c := strings.Compare(da, db); c != 0 {
				return c
			}
			i, j = ei, ej
			continue
		}
		if c := cmp.Compare(a[i], b[j]); c != 0 {
			return c
		}
		i++
		j++
	}
	if c := cmp.Compare(len(a)-i, len(b)-j); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// ketamaWeights replaces the weights of a ketama ring's shards by one
// spelling per placement: ketama places by the point counts the weights
// earn (ring.KetamaPointCounts), and weights in one proportion (1,1,1 and
// 2,2,2), or whose proportions round alike (1,2 and 100,201), earn the
// same counts. Equal counts are written as weight 1 each, so that a
// config of equal weights keeps the ID that its weights left unset (1)
// always gave; other counts are written as the weights. Weights that do
// not validate (no counts, or a shard without a point) are kept as
// written.
func ketamaWeights(shards []ring.Shard) {
	counts := ring.KetamaPointCounts(shards)
	if len(counts) == 0 || slices.Contains(counts, 0) {
		return
	}
	equal := !slices.ContainsFunc(counts, func(n int) bool { return n != counts[0] })
	for i := range shards {
		shards[i].Weight = counts[i]
		if equal {
			shards[i].Weight = 1
		}
	}
}

// continuumName is the name twemproxy's ketama and modula place a server
// by, as package ring documents it: its Name, else its address, else its
// host when the port is 11211 (libmemcached's default).
func continuumName(s ring.Shard) string {
	if s.Name != "" {
		return s.Name
	}
	if host, ok := strings.CutSuffix(s.Addr, ":11211"); ok {
		return host
	}
	return s.Addr
}

// sanitizeName keeps what CLIENT SETNAME accepts (no spaces, printable),
// and no '>', which separates the two sides of a migration in connection
// names ("shardis:<i>:migrating:A>B") and fence keys (FenceKey).
func sanitizeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r <= ' ' || r > '~' || r == '>' {
			return '_'
		}
		return r
	}, s)
}

// checkTopologyIDer refuses a Router that names its placement (TopologyIDer)
// with one of the connection names' own forms (migrate_name.go): an empty
// ID cannot be read back from a beacon's name; "cluster" and "cluster-..."
// are taken for a Redis Cluster by the fence's marker (fenceName) and by
// the mover, which lets any cluster's beacon stand for another's; and a
// phase word with a colon makes "shardis:<i>:<id>" read as a beacon, which
// does not parse, so the mover takes the process's every connection for an
// unnamed client.
func checkTopologyIDer(r Router) error {
	t, ok := r.(TopologyIDer)
	if !ok {
		return nil
	}
	raw, err := routerCall("TopologyIDer.TopologyID", t.TopologyID)
	if err != nil {
		return err
	}
	id := sanitizeName(raw)
	why := ""
	switch {
	case id == "":
		why = "it is empty"
	case id == "cluster" || strings.HasPrefix(id, "cluster-"):
		why = `IDs "cluster" and "cluster-..." name Redis Clusters in the fence's marker and connection names`
	default:
		for _, p := range []MigrationPhase{PhaseWaiting, PhaseFenced, PhaseArmed} {
			if strings.HasPrefix(id, p.String()+":") {
				why = fmt.Sprintf("%q begins a migrating process's connection name", p.String()+":")
			}
		}
	}
	if why == "" {
		return nil
	}
	return badConfigf("the Router's TopologyID %q is one of the connection names' own forms: %s; name the placement otherwise", id, why)
}

package ring

import (
	"cmp"
	"crypto/md5"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ringPoints is a ring's virtual nodes while it is being built: point i
// sits at pos[i] and belongs to shard own[i]. The same slices, sorted,
// become the ring's.
type ringPoints struct {
	pos []uint64
	own []int32
}

// newRingPoints returns room for n points.
func newRingPoints(n int) ringPoints {
	return ringPoints{pos: make([]uint64, n), own: make([]int32, n)}
}

// murmur3Points places Murmur3PointsPerWeight*weight points per shard.
// Point n of a shard sits at murmur3.Sum64(Label() + "-" + decimal(n)).
func murmur3Points(shards []Shard) (ringPoints, error) {
	total, err := totalWeight(shards, Murmur3PointsPerWeight, MaxPoints)
	if err != nil {
		return ringPoints{}, err
	}
	pts := newRingPoints(total * Murmur3PointsPerWeight)
	forEachShard(shards, Murmur3PointsPerWeight, pts, func(i, first int, pos []uint64, _ *[]byte) {
		murmur3Labels(pos, shards[i].Label()+"-", first)
	})
	return pts, nil
}

// jedisPoints places the points of Jedis's Sharded.initialize: shard by
// shard in list order, JedisPointsPerWeight*weight points each, named
// "SHARD-<i>-NODE-<n>" for unnamed shards, "<name>*<n>" for named ones
// (legacy: "<name>*<weight><n>"), hashed with the ring's key hash.
func jedisPoints(shards []Shard, kh keyHash, legacy bool) (ringPoints, error) {
	total, err := totalWeight(shards, JedisPointsPerWeight, MaxPoints)
	if err != nil {
		return ringPoints{}, err
	}
	pts := newRingPoints(total * JedisPointsPerWeight)
	forEachShard(shards, JedisPointsPerWeight, pts, func(i, first int, pos []uint64, buf *[]byte) {
		for n := range pos {
			*buf = jedisNodeName((*buf)[:0], i, shards[i], first+n, legacy)
			pos[n] = kh.position(*buf)
		}
	})
	return pts, nil
}

// jedisNodeName appends the name of virtual node n of shard s (at list
// position i) to buf.
func jedisNodeName(buf []byte, i int, s Shard, n int, legacy bool) []byte {
	if s.Name == "" {
		buf = append(buf, "SHARD-"...)
		buf = strconv.AppendInt(buf, int64(i), 10)
		buf = append(buf, "-NODE-"...)
		return strconv.AppendInt(buf, int64(n), 10)
	}
	buf = append(append(buf, s.Name...), '*')
	if legacy {
		buf = strconv.AppendInt(buf, int64(s.Weight), 10)
	}
	return strconv.AppendInt(buf, int64(n), 10)
}

// ketamaMaxName is the longest "<name>-<index>" twemproxy hashes faithfully:
// it formats the string into an 86-byte buffer (KETAMA_MAX_HOSTLEN) but
// hashes the untruncated length, reading past the text when it is longer.
const ketamaMaxName = 85

// ketamaMaxWeight bounds the total weight of a twemproxy pool, whose
// weights are C ints.
const ketamaMaxWeight = math.MaxInt32

// continuumName returns the name twemproxy hashes for a server: its name,
// else "host:port", else "host" when the port is 11211 (for compatibility
// with libmemcached).
func continuumName(s Shard) string {
	if s.Name != "" {
		return s.Name
	}
	if i := strings.LastIndexByte(s.Addr, ':'); i >= 0 && s.Addr[i+1:] == "11211" {
		return s.Addr[:i]
	}
	return s.Addr
}

// twemOrder returns the shard indexes in the order twemproxy keeps its
// servers: sorted by continuum name, shorter names first, then bytewise. It
// refuses two servers with the same continuum name, as twemproxy does.
func twemOrder(shards []Shard) ([]int, []string, error) {
	names := make([]string, len(shards))
	order := make([]int, len(shards))
	for i, s := range shards {
		names[i] = continuumName(s)
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(len(names[a]), len(names[b])); c != 0 {
			return c
		}
		return strings.Compare(names[a], names[b])
	})
	for k := 1; k < len(order); k++ {
		if a, b := order[k-1], order[k]; names[a] == names[b] {
			return nil, nil, fmt.Errorf("%w: shards %d and %d have the same continuum name %q",
				ErrDuplicateShard, min(a, b), max(a, b), names[a])
		}
	}
	return order, names, nil
}

// KetamaPointCounts returns the number of continuum points each shard
// of a ketama ring gets (by the shard list's order), from the weights
// alone, as twemproxy computes them: floor(w/W x 40 x n) x 4 in float32.
// The ketama placement depends on the weights through these counts only:
// weights that give the same counts (1,1,1 and 2,2,2; 1,2 and 100,201)
// place every key alike. It returns nil when a weight is not positive or
// the weights sum past what twemproxy holds (New refuses both); a count
// of 0 (New refuses that shard) is returned as is.
func KetamaPointCounts(shards []Shard) []int {
	total := 0
	for _, s := range shards {
		if s.Weight <= 0 || s.Weight > ketamaMaxWeight-total {
			return nil
		}
		total += s.Weight
	}
	counts := make([]int, len(shards))
	for i, s := range shards {
		counts[i] = ketamaPointCount(s.Weight, total, len(shards))
	}
	return counts
}

// ketamaPointCount reproduces twemproxy's float arithmetic for the number
// of continuum points of a server (a multiple of 4). Every step is rounded
// to float32 as the C code does; the explicit conversions also stop the
// compiler from fusing operations.
func ketamaPointCount(weight, totalWeight, servers int) int {
	pct := float32(uint32(weight)) / float32(uint32(totalWeight))
	x := float32(pct * 160)
	x = float32(x / 4)
	x = float32(x * float32(uint32(servers)))
	y := float32(float64(x) + 0.0000000001)
	return int(uint32(float32(math.Floor(float64(y))) * 4))
}

// ketamaPoints builds twemproxy's ketama continuum: servers in twemproxy
// order, each with ketamaPointCount points; for i from 0, the MD5 digest of
// "<continuum name>-<i>" gives four points, its four little-endian 32-bit
// words. A server whose weight earns no point is refused, unless pointless
// is set (a ring left after ejections, see Ring.Without): it then owns no
// point, as in twemproxy.
func ketamaPoints(shards []Shard, pointless bool) (ringPoints, error) {
	if len(shards) > MaxPoints/160 {
		return ringPoints{}, fmt.Errorf("%w: %d servers ask for more than %d ketama points (160 per server)", ErrTooManyPoints, len(shards), MaxPoints)
	}
	total, err := totalWeight(shards, 1, ketamaMaxWeight)
	if err != nil {
		return ringPoints{}, err
	}
	order, names, err := twemOrder(shards)
	if err != nil {
		return ringPoints{}, err
	}
	points := 0 // the ring's points: its slices are allocated once, to size
	for _, i := range order {
		points += ketamaPointCount(shards[i].Weight, total, len(shards))
	}
	pts := ringPoints{pos: make([]uint64, 0, points), own: make([]int32, 0, points)}
	var buf []byte
	for _, i := range order {
		count := ketamaPointCount(shards[i].Weight, total, len(shards))
		if count == 0 && pointless {
			continue
		}
		if count == 0 {
			return ringPoints{}, fmt.Errorf("%w: shard %d (%s) has weight %d of %d, too little for a single ketama point",
				ErrBadWeight, i, shards[i].Label(), shards[i].Weight, total)
		}
		if longest := len(names[i]) + 1 + len(strconv.Itoa(count/4-1)); longest > ketamaMaxName {
			return ringPoints{}, fmt.Errorf("%w %d: continuum name %q is too long for ketama (twemproxy hashes at most %d bytes of \"name-index\")",
				ErrBadShard, i, names[i], ketamaMaxName)
		}
		for h := range count / 4 {
			buf = strconv.AppendInt(append(append(buf[:0], names[i]...), '-'), int64(h), 10)
			d := md5.Sum(buf)
			for w := range 4 {
				pts.pos = append(pts.pos, uint64(le32(d[4*w:])))
				pts.own = append(pts.own, int32(i))
			}
		}
	}
	return pts, nil
}

// modulaSlots builds twemproxy's modula table: servers in twemproxy order,
// one slot per unit of weight.
func modulaSlots(shards []Shard) ([]int32, error) {
	total, err := totalWeight(shards, 1, MaxPoints)
	if err != nil {
		return nil, err
	}
	order, _, err := twemOrder(shards)
	if err != nil {
		return nil, err
	}
	slots := make([]int32, 0, total)
	for _, i := range order {
		for range shards[i].Weight {
			slots = append(slots, int32(i))
		}
	}
	return slots, nil
}

package hashtag

import (
	"strings"
	"unsafe"
)

// Tag returns the part of key that is hashed under rule r: a substring of
// key (the whole key when it holds no tag). It does not allocate.
func (r Rule) Tag(key string) string {
	lo, hi := r.span(key)
	return key[lo:hi]
}

// TagBytes is [Rule.Tag] for a key held in a byte slice. It returns a
// subslice of key (sharing its memory, with its capacity cut to its length)
// and does not allocate.
func (r Rule) TagBytes(key []byte) []byte {
	// The string view lives only during span, which reads it and returns
	// two offsets; it saves a copy and lets both forms share the fast
	// strings.IndexByte search.
	lo, hi := r.span(unsafe.String(unsafe.SliceData(key), len(key)))
	return key[lo:hi:hi]
}

// span returns the bounds of the hashed part of key.
func (r Rule) span(key string) (lo, hi int) {
	switch r.kind {
	case kindCluster:
		return pairSpan(key, '{', '}')
	case kindPair:
		return pairSpan(key, r.open, r.close)
	case kindJedis:
		return jedisSpan(key)
	default:
		return 0, len(key)
	}
}

// pairSpan implements the Redis Cluster and twemproxy rule: the first open
// byte, the first close byte after it, and a non-empty content between.
func pairSpan(key string, open, close byte) (lo, hi int) {
	s := strings.IndexByte(key, open)
	if s < 0 {
		return 0, len(key)
	}
	e := strings.IndexByte(key[s+1:], close)
	if e <= 0 { // no close byte, or nothing between
		return 0, len(key)
	}
	return s + 1, s + 1 + e
}

// jedisSpan finds the first match of the Java regular expression
// \{(.+?)\} and returns the bounds of its group, or the whole key.
//
// A match starts at a '{', takes one character that is not a line
// terminator, then runs to the first '}'. When a line terminator comes
// first, no '{' before it can match either (each would need a '}' before
// that terminator too), so the search resumes after it; when no '}' is
// left, nothing can match. The scan is therefore linear.
//
// '{', '}' and the first bytes of the terminators are never UTF-8
// continuation bytes, so the scan can go byte by byte: the continuation
// bytes of the tag's first character are passed over as ordinary bytes.
func jedisSpan(key string) (lo, hi int) {
	n := len(key)
	i := 0
	for {
		o := strings.IndexByte(key[i:], '{')
		if o < 0 {
			return 0, n
		}
		i += o
		j := i + 1 // the first character of the tag
		if j >= n {
			return 0, n
		}
		if t := terminator(key, j); t > 0 {
			i = j + t
			continue
		}
		k := j + 1
		for {
			if k >= n {
				return 0, n // no '}' left
			}
			if key[k] == '}' {
				return j, k
			}
			if t := terminator(key, k); t > 0 {
				i = k + t
				break
			}
			k++
		}
	}
}

// terminator returns the length of the Java line terminator that starts at
// key[i] (\n, \r, or UTF-8 encoded U+0085, U+2028, U+2029), or 0.
func terminator(key string, i int) int {
	switch key[i] {
	case '\n', '\r':
		return 1
	case 0xc2:
		if i+1 < len(key) && key[i+1] == 0x85 {
			return 2
		}
	case 0xe2:
		if i+2 < len(key) && key[i+1] == 0x80 && (key[i+2] == 0xa8 || key[i+2] == 0xa9) {
			return 3
		}
	}
	return 0
}

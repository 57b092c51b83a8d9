package cluster

import (
	"strconv"
	"strings"
)

// RedirectKind tells a MOVED redirect from an ASK redirect.
type RedirectKind int

const (
	// Moved means the slot is served by another node for good: update the
	// slot table (see Table.WithSlotOwner) and send the command there.
	Moved RedirectKind = iota + 1
	// Ask means the slot is being migrated and this one command must be
	// sent to the given node, preceded by ASKING; the slot table does not
	// change.
	Ask
)

// String returns "MOVED" or "ASK".
func (k RedirectKind) String() string {
	switch k {
	case Moved:
		return "MOVED"
	case Ask:
		return "ASK"
	}
	return "RedirectKind(" + strconv.Itoa(int(k)) + ")"
}

// Redirect is a MOVED or ASK error reply, parsed.
type Redirect struct {
	Kind RedirectKind
	// Slot is the hash slot of the command's keys.
	Slot int
	// Addr is the host:port of the node to send the command to.
	Addr string
}

// ParseRedirect parses the text of a MOVED or ASK error reply, such as
// "MOVED 3999 127.0.0.1:6381" or "ASK 3999 127.0.0.1:6381" (a leading '-'
// is allowed). asked is the host:port the command was sent to.
//
// The address is split at its last colon, so IPv6 endpoints work both
// bare, as Redis writes them ("::1:6380"), and in brackets ("[::1]:6380");
// Addr is always in net.JoinHostPort form ("[::1]:6380"). An empty host
// (":6380", sent with cluster-preferred-endpoint-type unknown-endpoint)
// means the host of asked.
//
// ok is false for any other text, including a redirect whose endpoint is
// "?" (the target node announces no hostname, so there is no address to
// follow): the caller should treat such an error as a reason to refresh
// the slot table. ParseRedirect does not allocate for the common
// "MOVED <slot> <ip>:<port>" form.
func ParseRedirect(msg string, asked string) (r Redirect, ok bool) {
	msg = strings.TrimPrefix(msg, "-")
	word, rest, _ := strings.Cut(msg, " ")
	switch word {
	case "MOVED":
		r.Kind = Moved
	case "ASK":
		r.Kind = Ask
	default:
		return Redirect{}, false
	}
	slotText, endpoint, found := strings.Cut(rest, " ")
	if !found || strings.IndexByte(endpoint, ' ') >= 0 {
		return Redirect{}, false
	}
	slot, err := strconv.Atoi(slotText)
	if err != nil || slot < 0 || slot >= SlotCount || slotText[0] == '+' {
		return Redirect{}, false
	}
	r.Slot = slot
	colon := strings.LastIndexByte(endpoint, ':')
	if colon < 0 {
		return Redirect{}, false
	}
	host, portText := endpoint[:colon], endpoint[colon+1:]
	port, err := strconv.Atoi(portText)
	if err != nil || port < 1 || port > 65535 || portText[0] == '+' {
		return Redirect{}, false
	}
	bracketed := strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]")
	if bracketed {
		host = host[1 : len(host)-1]
	}
	switch {
	case host == unknownEndpoint || strings.ContainsAny(host, "[]"):
		return Redirect{}, false
	case host == "":
		if host = hostOf(asked); host == "" {
			return Redirect{}, false
		}
		r.Addr = joinAddr(host, port)
	case portText[0] != '0' && bracketed == (strings.IndexByte(host, ':') >= 0):
		r.Addr = endpoint // already host:port or [v6]:port
	default:
		r.Addr = joinAddr(host, port) // a bare IPv6 address, or a port with leading zeros
	}
	return r, true
}

// ErrorCode returns the first word of a Redis error reply, the code that
// tells the kind of error: "MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN",
// "LOADING", "MASTERDOWN", "READONLY", "CROSSSLOT", "ERR", and so on. A
// leading '-' is skipped. It returns "" when the first word is not made of
// upper-case letters, digits, '_' and '-' only.
func ErrorCode(msg string) string {
	msg = strings.TrimPrefix(msg, "-")
	code, _, _ := strings.Cut(msg, " ")
	if code == "" {
		return ""
	}
	for i := 0; i < len(code); i++ {
		c := code[i]
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '_' && c != '-' {
			return ""
		}
	}
	return code
}

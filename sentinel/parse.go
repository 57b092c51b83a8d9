package sentinel

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/gomodule/redigo/redis"
)

// Role kinds, as ROLE reports them.
const (
	RoleMaster   = "master"
	RoleReplica  = "slave"
	RoleSentinel = "sentinel"
)

// Role is a server's answer to ROLE.
type Role struct {
	// Kind is RoleMaster, RoleReplica or RoleSentinel.
	Kind string
	// Offset is the replication offset (master: its own; replica: what it
	// has processed).
	Offset int64
	// Replicas are a master's connected replicas ("host:port").
	Replicas []string
	// MasterAddr is a replica's master ("host:port").
	MasterAddr string
	// State is a replica's link state: "connect", "connecting", "sync",
	// "connected" (or "handshake" and the like on newer servers).
	State string
	// Masters are the master names a Sentinel monitors.
	Masters []string
}

// Replica is one entry of SENTINEL REPLICAS.
type Replica struct {
	// Addr is the replica's "host:port".
	Addr string
	// Flags are the Sentinel's flags for it, e.g. "slave", "s_down",
	// "disconnected".
	Flags []string
	// MasterLinkOK reports master-link-status "ok".
	MasterLinkOK bool
	// MasterAddr is the master the replica replicates from, as the
	// Sentinel last saw it ("" when not reported).
	MasterAddr string
	// Offset is slave-repl-offset.
	Offset int64
}

// Healthy reports whether the replica is fit to serve reads: connected to
// the Sentinel, not subjectively or objectively down, and with a working
// link to its master.
func (r Replica) Healthy() bool {
	for _, f := range r.Flags {
		switch f {
		case "s_down", "o_down", "disconnected":
			return false
		}
	}
	return r.MasterLinkOK
}

// SwitchMaster is the payload of a +switch-master message: the Sentinels
// promoted a new master for the set named Master.
type SwitchMaster struct {
	Master  string
	OldAddr string
	NewAddr string
}

// ParseMasterAddr reads the reply to SENTINEL GET-MASTER-ADDR-BY-NAME: a
// two-element array of host and port. A nil reply (the Sentinel does not
// know the name) gives ErrUnknownMaster. The result is "host:port" with
// IPv6 hosts in brackets.
func ParseMasterAddr(reply any) (string, error) {
	const cmd = "SENTINEL GET-MASTER-ADDR-BY-NAME"
	switch r := reply.(type) {
	case nil:
		return "", ErrUnknownMaster
	case redis.Error:
		return "", fmt.Errorf("shardis: sentinel: %s: %w", cmd, r)
	case []any:
		if len(r) != 2 {
			return "", badReply(cmd, "%d elements, want 2", len(r))
		}
		host, ok := text(r[0])
		if !ok || !validHost(host) {
			return "", badReply(cmd, "bad host %s", describe(r[0]))
		}
		port, ok := portOf(r[1])
		if !ok {
			return "", badReply(cmd, "bad port %s", describe(r[1]))
		}
		return net.JoinHostPort(host, strconv.Itoa(port)), nil
	}
	return "", badReply(cmd, "%s, want an array", describe(reply))
}

// ParseRole reads the reply to ROLE.
func ParseRole(reply any) (Role, error) {
	const cmd = "ROLE"
	if e, ok := reply.(redis.Error); ok {
		return Role{}, fmt.Errorf("shardis: sentinel: ROLE: %w", e)
	}
	r, ok := reply.([]any)
	if !ok || len(r) == 0 {
		return Role{}, badReply(cmd, "%s, want a non-empty array", describe(reply))
	}
	kind, _ := text(r[0])
	switch kind {
	case RoleMaster:
		if len(r) != 3 {
			return Role{}, badReply(cmd, "master reply with %d elements, want 3", len(r))
		}
		off, ok := r[1].(int64)
		if !ok {
			return Role{}, badReply(cmd, "bad master offset %s", describe(r[1]))
		}
		list, ok := r[2].([]any)
		if !ok {
			return Role{}, badReply(cmd, "bad replica list %s", describe(r[2]))
		}
		role := Role{Kind: RoleMaster, Offset: off}
		for _, e := range list {
			f, ok := e.([]any)
			if !ok || len(f) < 2 {
				return Role{}, badReply(cmd, "bad replica entry %s", describe(e))
			}
			host, ok := text(f[0])
			port, okPort := portOf(f[1])
			if !ok || !validHost(host) || !okPort {
				return Role{}, badReply(cmd, "bad replica entry %s", describe(e))
			}
			role.Replicas = append(role.Replicas, net.JoinHostPort(host, strconv.Itoa(port)))
		}
		return role, nil
	case RoleReplica:
		if len(r) != 5 {
			return Role{}, badReply(cmd, "replica reply with %d elements, want 5", len(r))
		}
		host, ok := text(r[1])
		port, okPort := portOf(r[2])
		state, okState := text(r[3])
		off, okOff := r[4].(int64)
		if !ok || !validHost(host) || !okPort || !okState || !okOff {
			return Role{}, badReply(cmd, "bad replica reply")
		}
		return Role{Kind: RoleReplica, MasterAddr: net.JoinHostPort(host, strconv.Itoa(port)), State: state, Offset: off}, nil
	case RoleSentinel:
		if len(r) != 2 {
			return Role{}, badReply(cmd, "sentinel reply with %d elements, want 2", len(r))
		}
		list, ok := r[1].([]any)
		if !ok {
			return Role{}, badReply(cmd, "bad master list %s", describe(r[1]))
		}
		role := Role{Kind: RoleSentinel}
		for _, e := range list {
			name, ok := text(e)
			if !ok {
				return Role{}, badReply(cmd, "bad master name %s", describe(e))
			}
			role.Masters = append(role.Masters, name)
		}
		return role, nil
	}
	return Role{}, badReply(cmd, "unknown role %s", describe(r[0]))
}

// ParseReplicas reads the reply to SENTINEL REPLICAS (or SENTINEL SLAVES):
// an array with one flat field-value array per replica. An error reply
// naming an unknown master gives ErrUnknownMaster.
func ParseReplicas(reply any) ([]Replica, error) {
	const cmd = "SENTINEL REPLICAS"
	switch r := reply.(type) {
	case redis.Error:
		if strings.Contains(strings.ToLower(string(r)), "no such master") {
			return nil, fmt.Errorf("%w (%s)", ErrUnknownMaster, string(r))
		}
		return nil, fmt.Errorf("shardis: sentinel: %s: %w", cmd, r)
	case []any:
		out := make([]Replica, 0, len(r))
		for _, e := range r {
			f, ok := e.([]any)
			if !ok || len(f)%2 != 0 {
				return nil, badReply(cmd, "entry %s is not a field-value list", describe(e))
			}
			var rep Replica
			var host string
			port := -1
			var mhost, mport string
			for i := 0; i < len(f); i += 2 {
				k, ok1 := text(f[i])
				v, ok2 := text(f[i+1])
				if !ok1 || !ok2 {
					return nil, badReply(cmd, "field %d is not text", i/2)
				}
				switch k {
				case "ip":
					host = v
				case "port":
					p, ok := portOf(v)
					if !ok {
						return nil, badReply(cmd, "bad port %q", v)
					}
					port = p
				case "flags":
					rep.Flags = strings.Split(v, ",")
				case "master-link-status":
					rep.MasterLinkOK = v == "ok"
				case "master-host":
					mhost = v
				case "master-port":
					mport = v
				case "slave-repl-offset":
					n, err := strconv.ParseInt(v, 10, 64)
					if err != nil {
						return nil, badReply(cmd, "bad slave-repl-offset %q", v)
					}
					rep.Offset = n
				}
			}
			if !validHost(host) || port < 0 {
				return nil, badReply(cmd, "entry without a usable ip and port")
			}
			rep.Addr = net.JoinHostPort(host, strconv.Itoa(port))
			if p, ok := portOf(mport); ok && validHost(mhost) && mhost != "?" {
				rep.MasterAddr = net.JoinHostPort(mhost, strconv.Itoa(p))
			}
			out = append(out, rep)
		}
		return out, nil
	}
	return nil, badReply(cmd, "%s, want an array", describe(reply))
}

// parseConfigEpoch reads the config-epoch field of the reply to SENTINEL
// MASTER (a flat field-value array), and the master that reply names
// (its ip and port fields; "" when they are missing or unusable).
// inFailover reports the flag failover_in_progress: the epoch is then
// already the new one, while ip and port still name the master being
// failed over from (GET-MASTER-ADDR-BY-NAME names the promoted replica
// from the middle of a failover on, SENTINEL MASTER only at its end).
func parseConfigEpoch(reply any) (epoch int64, master string, inFailover, ok bool) {
	f, isArray := reply.([]any)
	if !isArray || len(f)%2 != 0 {
		return 0, "", false, false
	}
	var host string
	port := -1
	for i := 0; i < len(f); i += 2 {
		k, _ := text(f[i])
		switch k {
		case "flags":
			flags, _ := text(f[i+1])
			inFailover = slices.Contains(strings.Split(flags, ","), "failover_in_progress")
		case "ip":
			host, _ = text(f[i+1])
		case "port":
			if p, pok := portOf(f[i+1]); pok {
				port = p
			}
		case "config-epoch":
			switch v := f[i+1].(type) {
			case int64:
				epoch, ok = v, v >= 0
			default:
				s, sok := text(v)
				if !sok {
					return 0, "", false, false
				}
				n, err := strconv.ParseInt(s, 10, 64)
				epoch, ok = n, err == nil && n >= 0
			}
		}
	}
	if !ok {
		return 0, "", false, false
	}
	if validHost(host) && port >= 0 {
		master = net.JoinHostPort(host, strconv.Itoa(port))
	}
	return epoch, master, inFailover, true
}

// ParseSwitchMaster reads the message of a +switch-master event:
// "<master name> <old ip> <old port> <new ip> <new port>".
func ParseSwitchMaster(msg string) (SwitchMaster, error) {
	const cmd = "+switch-master"
	f := strings.Split(msg, " ")
	if len(f) != 5 {
		return SwitchMaster{}, badReply(cmd, "%d words, want 5", len(f))
	}
	if f[0] == "" || strings.ContainsAny(f[0], "\r\n\x00\t") || !validHost(f[1]) || !validHost(f[3]) {
		return SwitchMaster{}, badReply(cmd, "empty or bad word")
	}
	op, ok1 := portOf(f[2])
	np, ok2 := portOf(f[4])
	if !ok1 || !ok2 {
		return SwitchMaster{}, badReply(cmd, "bad port")
	}
	return SwitchMaster{
		Master:  f[0],
		OldAddr: net.JoinHostPort(f[1], strconv.Itoa(op)),
		NewAddr: net.JoinHostPort(f[3], strconv.Itoa(np)),
	}, nil
}

// validHost accepts a host name or IP address: not empty, without white
// space, control characters or brackets (IPv6 addresses come bare).
func validHost(h string) bool {
	if h == "" {
		return false
	}
	for _, c := range h {
		if c <= ' ' || c == 0x7f || c == '[' || c == ']' || c == '/' || c == '@' {
			return false
		}
	}
	return true
}

// text returns a bulk or simple string reply as a string.
func text(v any) (string, bool) {
	switch s := v.(type) {
	case []byte:
		return string(s), true
	case string:
		return s, true
	}
	return "", false
}

// portOf reads a port given as text or integer and checks it is in
// 1..65535.
func portOf(v any) (int, bool) {
	var n int64
	switch p := v.(type) {
	case int64:
		n = p
	default:
		s, ok := text(v)
		if !ok || s == "" || len(s) > 5 {
			return 0, false
		}
		for _, c := range s {
			if c < '0' || c > '9' {
				return 0, false
			}
		}
		n, _ = strconv.ParseInt(s, 10, 64)
	}
	if n < 1 || n > 65535 {
		return 0, false
	}
	return int(n), true
}

// describe names a reply's type (and a short value) for error messages.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "nil"
	case []byte:
		if len(x) > 32 {
			x = x[:32]
		}
		return fmt.Sprintf("bulk %q", x)
	case string:
		if len(x) > 32 {
			x = x[:32]
		}
		return fmt.Sprintf("status %q", x)
	case int64:
		return fmt.Sprintf("integer %d", x)
	case []any:
		return fmt.Sprintf("array of %d", len(x))
	case redis.Error:
		return "error reply"
	}
	return fmt.Sprintf("%T", v)
}

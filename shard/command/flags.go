package command

import (
	"strconv"
	"strings"
)

// Flags are the command flags reported by COMMAND.
type Flags uint32

// The command flags, one per flag name COMMAND reports.
const (
	// Write: the command may modify data ("write").
	Write Flags = 1 << iota
	// ReadOnly: the command only reads data ("readonly").
	ReadOnly
	// Admin: an administrative command ("admin").
	Admin
	// PubSub: a publish/subscribe command ("pubsub").
	PubSub
	// NoScript: not allowed inside scripts ("noscript").
	NoScript
	// Blocking: the command may block the client ("blocking").
	Blocking
	// Fast: O(1) or O(log N) and never delays the server ("fast").
	Fast
	// MovableKeys: key positions depend on the arguments ("movablekeys").
	MovableKeys
	// DenyOOM: refused when the server is out of memory ("denyoom").
	DenyOOM
	// Loading: allowed while the dataset loads ("loading").
	Loading
	// Stale: allowed on a replica with stale data ("stale").
	Stale
	// SkipMonitor: not shown by MONITOR ("skip_monitor").
	SkipMonitor
	// SkipSlowlog: not logged by the slow log ("skip_slowlog").
	SkipSlowlog
	// Asking: allowed on an importing slot in cluster mode ("asking").
	Asking
	// NoAuth: allowed before authentication ("no_auth").
	NoAuth
	// MayReplicate: may be propagated to replicas ("may_replicate").
	MayReplicate
	// NoMandatoryKeys: may take no keys at all ("no_mandatory_keys").
	NoMandatoryKeys
	// NoAsyncLoading: refused during asynchronous loading ("no_async_loading").
	NoAsyncLoading
	// NoMulti: not allowed inside MULTI ("no_multi").
	NoMulti
	// AllowBusy: allowed while a script is busy ("allow_busy").
	AllowBusy
	// Module: implemented by a module ("module").
	Module
)

var flagNames = [...]string{
	"write", "readonly", "admin", "pubsub", "noscript", "blocking", "fast", "movablekeys",
	"denyoom", "loading", "stale", "skip_monitor", "skip_slowlog", "asking", "no_auth",
	"may_replicate", "no_mandatory_keys", "no_async_loading", "no_multi", "allow_busy", "module",
}

// String lists the flags by their COMMAND names, separated by spaces.
func (f Flags) String() string { return bitNames(uint32(f), flagNames[:]) }

// KeyFlags are the flags of one key specification.
type KeyFlags uint32

// The key spec flags.
const (
	// KeyRO: the key is read ("RO").
	KeyRO KeyFlags = 1 << iota
	// KeyRW: the key is read and written ("RW").
	KeyRW
	// KeyOW: the key is overwritten ("OW").
	KeyOW
	// KeyRM: the key is deleted ("RM").
	KeyRM
	// KeyAccess: the key's value is returned or used ("access").
	KeyAccess
	// KeyUpdate: the value is updated ("update").
	KeyUpdate
	// KeyInsert: data is added to the value ("insert").
	KeyInsert
	// KeyDelete: data is removed from the value ("delete").
	KeyDelete
	// KeyNotKey: the argument is not a key but hashes like one, such as a
	// sharded pub/sub channel ("not_key").
	KeyNotKey
	// KeyIncomplete: the spec may miss some keys ("incomplete").
	KeyIncomplete
	// KeyVariableFlags: the flags depend on the arguments ("variable_flags").
	KeyVariableFlags
)

var keyFlagNames = [...]string{
	"RO", "RW", "OW", "RM", "access", "update", "insert", "delete", "not_key", "incomplete", "variable_flags",
}

// String lists the flags by their COMMAND names, separated by spaces.
func (f KeyFlags) String() string { return bitNames(uint32(f), keyFlagNames[:]) }

func bitNames(v uint32, names []string) string {
	var b strings.Builder
	for i, n := range names {
		if v&(1<<i) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(n)
		v &^= 1 << i
	}
	if v != 0 {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("0x")
		b.WriteString(strconv.FormatUint(uint64(v), 16))
	}
	return b.String()
}

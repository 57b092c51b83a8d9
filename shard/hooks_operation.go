package shard

import (
	"strings"
	"sync"
	"sync/atomic"

	"github.com/shardis/shardis/shard/command"
)

// OtherOperation is the operation name (CommandEvent.Operation,
// Op.Operation) of a command the client cannot vouch for: a name that is
// neither in the command table, nor learned from the servers, nor shaped
// like a module's command, or a module-shaped name past
// MaxModuleOperations.
const OtherOperation = "OTHER"

// MaxModuleOperations is how many distinct module-shaped command names
// (MODULE.COMMAND, such as JSON.SET or FT.SEARCH) keep their own
// operation name in one process; names first seen after that are
// OtherOperation. The bound keeps metric series and span names finite
// when callers build dotted names from data.
const MaxModuleOperations = 64

// maxSpellings bounds the cache of operation names by the caller's
// spelling of a command that is not in the table.
const maxSpellings = 1024

var (
	tableNames    sync.Map // *command.Info -> its name in upper case
	spellings     sync.Map // a caller's spelling -> operation name
	spellingCount atomic.Int64
	moduleMu      sync.Mutex
	moduleNames   = map[string]bool{} // module-shaped operation names passed on
)

// operationName is the operation name of the command a caller named, with
// the client's description of it (info: the table's, a learned one, or
// nil): the name in upper case when the command table knows it, when the
// client learned it from the servers (COMMAND INFO), or when it is shaped
// like a module's command (among the first MaxModuleOperations such
// names); OtherOperation otherwise. It does not allocate once a name was
// seen.
func operationName(name string, info *command.Info) string {
	if t := lookupCommand(name); t != nil {
		for i := 0; i < len(name); i++ {
			if c := name[i]; c >= 'a' && c <= 'z' {
				if v, ok := tableNames.Load(t); ok {
					return v.(string)
				}
				v, _ := tableNames.LoadOrStore(t, strings.ToUpper(t.Name))
				return v.(string)
			}
		}
		return name
	}
	if info == nil && !moduleShaped(name) {
		return OtherOperation
	}
	if v, ok := spellings.Load(name); ok {
		return v.(string)
	}
	label := strings.ToUpper(name)
	if info == nil && !admitModule(label) {
		label = OtherOperation
	}
	if spellingCount.Add(1) <= maxSpellings {
		spellings.Store(name, label)
	}
	return label
}

// admitModule reports whether the module-shaped operation name label has,
// or now gets, a name of its own (MaxModuleOperations).
func admitModule(label string) bool {
	moduleMu.Lock()
	defer moduleMu.Unlock()
	if moduleNames[label] {
		return true
	}
	if len(moduleNames) >= MaxModuleOperations {
		return false
	}
	moduleNames[label] = true
	return true
}

// moduleShaped reports whether name looks like a module's command:
// MODULE.COMMAND, at most 40 bytes, the module's name a letter then
// letters and digits, the command's letters, digits and underscores.
func moduleShaped(name string) bool {
	if len(name) > 40 {
		return false
	}
	mod, cmd, ok := strings.Cut(name, ".")
	if !ok || mod == "" || cmd == "" || !isLetter(mod[0]) {
		return false
	}
	for i := 0; i < len(mod); i++ {
		if c := mod[i]; !isLetter(c) && !isDigit(c) {
			return false
		}
	}
	for i := 0; i < len(cmd); i++ {
		if c := cmd[i]; !isLetter(c) && !isDigit(c) && c != '_' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

// Operation returns the command's name fit for a metric label or a span
// name: in upper case when the command table knows the command, when the
// client learned it from the servers (COMMAND INFO: a renamed command, a
// newer server's), or when the name is shaped like a module's command
// (MODULE.COMMAND, see MaxModuleOperations); OtherOperation otherwise. The
// name a caller passes to Do is not trusted as is: a typo or a name built
// from data cannot grow the series without bound. A part of a
// multi-key command that the client split over several slots or shards
// (a one-key part of an MGET, sent as GET, included) is named after the
// caller's command: one MGET is counted as MGET on each node it reached.
func (ev *CommandEvent) Operation() string {
	if ev.operation != "" {
		return ev.operation
	}
	if ev.cl == nil {
		return operationName(ev.Name, nil)
	}
	return operationName(ev.Name, ev.cl.info)
}

// Operation returns "PIPELINE" for a pipeline, "MULTI" for a Client.Tx,
// and otherwise the command's operation name as CommandEvent.Operation gives it (decided
// when the operation starts: a command the client learns during its first
// call is OtherOperation for that call's Start, unless module-shaped).
func (op *Op) Operation() string {
	if op.Pipeline {
		return "PIPELINE"
	}
	if op.operation != "" {
		return op.operation
	}
	return operationName(op.Name, nil)
}

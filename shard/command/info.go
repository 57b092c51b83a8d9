package command

// Info describes one command or subcommand as COMMAND reports it.
//
// Values come from the generated table and are shared: treat them, their
// slices included, as read-only.
type Info struct {
	// Name is the lower-case command name; a subcommand is named
	// "parent|sub", for example "object|encoding".
	Name string
	// Arity is the number of arguments including the command name (and, for
	// a subcommand, the subcommand name); a negative arity -N means "at
	// least N".
	Arity int
	// Flags are the command flags.
	Flags Flags
	// FirstKey, LastKey and Step are the legacy key range of COMMAND
	// (argument indexes counting the command name as 0). KeySpecs supersede
	// them.
	FirstKey, LastKey, Step int
	// ACLCategories are the ACL categories, such as "@read".
	ACLCategories []string
	// Tips are the command tips, such as "request_policy:all_shards".
	Tips []string
	// RequestPolicy is the request_policy tip, if any.
	RequestPolicy RequestPolicy
	// ResponsePolicy is the response_policy tip, if any.
	ResponsePolicy ResponsePolicy
	// KeySpecs say where the keys are, in the server's order.
	KeySpecs []KeySpec
	// Subcommands of a container command (OBJECT, XINFO, ...), sorted by
	// name.
	Subcommands []*Info

	// Filled in once at package initialisation.
	rule     keyRule // hand-written key rule for specs the server cannot evaluate
	hasKeys  bool
	write    bool
	readOnly bool
}

// KeySpec is one key specification: where to start looking (BeginSearch)
// and which arguments from there are keys (FindKeys). Indexes count the
// command name as 0, as in COMMAND.
type KeySpec struct {
	// Flags say how the command uses the keys.
	Flags KeyFlags
	// Begin is where the search starts.
	Begin BeginSearch
	// Find says which arguments are keys.
	Find FindKeys
}

// BeginKind is the type of a begin_search step.
type BeginKind uint8

// The begin_search types.
const (
	// BeginUnknown: the start cannot be described ("unknown").
	BeginUnknown BeginKind = iota
	// BeginIndex: keys start at a fixed argument index ("index").
	BeginIndex
	// BeginKeyword: keys start after a keyword ("keyword").
	BeginKeyword
)

// BeginSearch is the begin_search part of a key spec.
type BeginSearch struct {
	// Kind is the search type.
	Kind BeginKind
	// Index is the first key's argument index (BeginIndex).
	Index int
	// Keyword is searched for, case-insensitively (BeginKeyword).
	Keyword string
	// StartFrom is where the keyword search starts: a positive index
	// searches forward, a negative one counts from the end and searches
	// backward (BeginKeyword).
	StartFrom int
}

// FindKind is the type of a find_keys step.
type FindKind uint8

// The find_keys types.
const (
	// FindUnknown: the keys cannot be described ("unknown").
	FindUnknown FindKind = iota
	// FindRange: a range of arguments ("range").
	FindRange
	// FindKeyNum: an argument gives the number of keys ("keynum").
	FindKeyNum
)

// FindKeys is the find_keys part of a key spec.
type FindKeys struct {
	// Kind is the find type.
	Kind FindKind
	// LastKey is the last key relative to the begin index (FindRange); a
	// negative value counts from the end of the arguments, or, with Limit,
	// from the end of the first 1/Limit of the remaining arguments.
	LastKey int
	// KeyStep is the distance between keys (FindRange and FindKeyNum).
	KeyStep int
	// Limit divides the remaining arguments when LastKey is negative
	// (FindRange); 0 means no limit.
	Limit int
	// KeyNumIdx is the index of the key count relative to the begin index
	// (FindKeyNum).
	KeyNumIdx int
	// FirstKey is the index of the first key relative to the begin index
	// (FindKeyNum).
	FirstKey int
}

// IsContainer reports whether the command only groups subcommands (OBJECT,
// XINFO, CONFIG, ...).
func (i *Info) IsContainer() bool { return i != nil && len(i.Subcommands) > 0 }

// IsWrite reports whether the command may modify data. For a container it
// reports whether any subcommand may; call Resolve first to ask about a
// particular call.
func (i *Info) IsWrite() bool { return i != nil && i.write }

// IsReadOnly reports whether the command only reads data. For a container
// it reports whether some subcommand is read-only and none may write (HELP
// subcommands are neither).
func (i *Info) IsReadOnly() bool { return i != nil && i.readOnly }

// HasKeys reports whether the command takes key arguments. For a container
// it reports whether any subcommand does. Sharded pub/sub channels are not
// keys (see ChannelPositions).
func (i *Info) HasKeys() bool { return i != nil && i.hasKeys }

// Subcommand returns the subcommand of a container named name (any case,
// without the parent's name), or nil.
func (i *Info) Subcommand(name string) *Info {
	if !i.IsContainer() {
		return nil
	}
	return lookupSub(i.Name, name)
}

// Resolve returns the entry that describes a call with args (the arguments
// after the command name): for a container, the subcommand named by
// args[0], or nil when there is no such subcommand; otherwise i itself. A
// container called without arguments resolves to itself.
func (i *Info) Resolve(args []any) *Info {
	if !i.IsContainer() || len(args) == 0 {
		return i
	}
	return subFromArg(i, args[0])
}

// finish fills in the derived fields once the table is complete.
func (i *Info) finish() {
	if r, ok := rules[i.Name]; ok {
		i.rule = r
	}
	if len(i.Subcommands) == 0 {
		for _, ks := range i.KeySpecs {
			if ks.Flags&KeyNotKey == 0 {
				i.hasKeys = true
			}
		}
		i.write = i.Flags&Write != 0
		i.readOnly = i.Flags&ReadOnly != 0
		return
	}
	anyRead := false
	for _, s := range i.Subcommands {
		s.finish()
		i.hasKeys = i.hasKeys || s.hasKeys
		i.write = i.write || s.write
		anyRead = anyRead || s.readOnly
	}
	i.readOnly = anyRead && !i.write
}

package command

import "strconv"

// KeyPositions appends to dst the indexes into args of the call's key
// arguments, in the order the server lists them, and returns the extended
// slice. args are the arguments after the command name; for a container
// command (OBJECT, XINFO, MEMORY, ...) args[0] names the subcommand, and the
// same holds when i is itself a subcommand entry.
//
// The keys are found from the command's key specs exactly as the server
// does (COMMAND GETKEYS gives the same keys): a begin search by index, or
// by keyword from a start index (negative: from the end, searching
// backward), then a range {lastkey, keystep, limit} or a key count
// {keynumidx, firstkey, keystep}. The few commands whose specs cannot be
// evaluated (SORT, SORT_RO, MIGRATE ... KEYS) use hand-written rules; see
// the package documentation.
//
// KeyPositions returns an *ArgsError matching ErrBadArgs when args do not
// fit the arity, a key count is not an integer, is negative, is zero for a
// command that needs keys, or points past the arguments, or a keyed
// command's arguments hold no key; it matches ErrUnknownCommand when i is
// nil or the subcommand is unknown. On error dst is returned unchanged.
// A keyless command gives dst unchanged and no error. KeyPositions never
// panics and, for a command with fixed key positions and enough capacity in
// dst, does not allocate.
func (i *Info) KeyPositions(args []any, dst []int) ([]int, error) {
	c, err := i.forCall(args)
	if err != nil {
		return dst, err
	}
	start := len(dst)
	out, f := c.fromSpecs(args, dst, false)
	if f.code != ok {
		if c.rule == nil {
			return dst[:start], f.err(c)
		}
		out = c.rule(args, out[:start])
	}
	if len(out) == start && c.hasKeys && c.Flags&NoMandatoryKeys == 0 {
		return dst[:start], badArgs(c, "no key among the arguments")
	}
	return out, nil
}

// ChannelPositions appends to dst the indexes into args of the arguments
// that are not keys but hash to a slot like keys do: the channels of the
// sharded pub/sub commands (SPUBLISH, SSUBSCRIBE, SUNSUBSCRIBE), described
// by key specs flagged not_key. Other commands give dst unchanged. Errors
// are as for KeyPositions.
func (i *Info) ChannelPositions(args []any, dst []int) ([]int, error) {
	c, err := i.forCall(args)
	if err != nil {
		return dst, err
	}
	out, f := c.fromSpecs(args, dst, true)
	if f.code != ok {
		return dst, f.err(c)
	}
	return out, nil
}

// forCall resolves a container to its subcommand and checks the arity.
func (i *Info) forCall(args []any) (*Info, error) {
	if i == nil {
		return nil, &ArgsError{Reason: "unknown command", Err: ErrUnknownCommand}
	}
	c := i
	if len(i.Subcommands) > 0 && len(args) > 0 {
		if c = subFromArg(i, args[0]); c == nil {
			return nil, &ArgsError{Command: displayName(i.Name), Reason: "unknown subcommand", Err: ErrUnknownCommand}
		}
	}
	argc := len(args) + 1
	if (c.Arity > 0 && argc != c.Arity) || (c.Arity < 0 && argc < -c.Arity) {
		return nil, arityError(c, argc)
	}
	return c, nil
}

func arityError(c *Info, argc int) error {
	want := strconv.Itoa(c.Arity - 1)
	if c.Arity < 0 {
		want = "at least " + strconv.Itoa(-c.Arity-1)
	}
	return badArgs(c, "wrong number of arguments: "+strconv.Itoa(argc-1)+" given, "+want+" expected")
}

// failure codes of a key spec evaluation.
const (
	ok uint8 = iota
	failUnknownSpec
	failIncomplete
	failNoKeyCount
	failKeyCountNotInt
	failKeyCountNegative
	failKeyCountZero
	failKeyCountTooLarge
	failOutOfRange
)

// failure says why the key specs could not give the keys; it is cheap to
// return on the success path and becomes an error only when needed.
type failure struct {
	code uint8
	n    int64 // the key count, for failKeyCountTooLarge
}

func (f failure) err(c *Info) error {
	switch f.code {
	case failUnknownSpec, failIncomplete:
		return badArgs(c, "key positions cannot be found from the key specs")
	case failNoKeyCount:
		return badArgs(c, "the number of keys is missing")
	case failKeyCountNotInt:
		return badArgs(c, "the number of keys is not an integer")
	case failKeyCountNegative:
		return badArgs(c, "the number of keys is negative")
	case failKeyCountZero:
		return badArgs(c, "the number of keys must be positive")
	case failKeyCountTooLarge:
		return badArgs(c, "the number of keys ("+strconv.FormatInt(f.n, 10)+") exceeds the arguments")
	default:
		return badArgs(c, "key positions fall outside the arguments")
	}
}

// fromSpecs evaluates c's key specs against args, appending key indexes
// (into args) to dst. With channels it evaluates only the not_key specs,
// otherwise only the others. It stops at the first spec the server would
// call invalid; the caller discards what was appended then.
func (c *Info) fromSpecs(args []any, dst []int, channels bool) ([]int, failure) {
	// argv indexes count the command name as 0, so argv[k] is args[k-1].
	argc := len(args) + 1
	for s := range c.KeySpecs {
		ks := &c.KeySpecs[s]
		if (ks.Flags&KeyNotKey != 0) != channels {
			continue
		}
		var first int
		switch ks.Begin.Kind {
		case BeginIndex:
			first = ks.Begin.Index
		case BeginKeyword:
			first = findKeyword(args, ks.Begin.Keyword, ks.Begin.StartFrom)
			if first == 0 {
				continue // keyword absent: this spec has no keys
			}
		default:
			return dst, failure{code: failUnknownSpec}
		}
		var last, step int
		var count int64 = -1
		switch ks.Find.Kind {
		case FindRange:
			step = ks.Find.KeyStep
			switch {
			case ks.Find.LastKey >= 0:
				last = first + ks.Find.LastKey
			case ks.Find.Limit <= 0:
				last = argc + ks.Find.LastKey
			default:
				last = first + (argc-first)/ks.Find.Limit + ks.Find.LastKey
			}
		case FindKeyNum:
			step = ks.Find.KeyStep
			at := first + ks.Find.KeyNumIdx
			if at < 1 || at >= argc {
				return dst, failure{code: failNoKeyCount}
			}
			n, valid := argInt(args[at-1])
			switch {
			case !valid:
				return dst, failure{code: failKeyCountNotInt}
			case n < 0:
				return dst, failure{code: failKeyCountNegative}
			case n == 0:
				if c.Flags&NoMandatoryKeys != 0 {
					continue
				}
				return dst, failure{code: failKeyCountZero}
			case n >= int64(argc):
				return dst, failure{code: failKeyCountTooLarge, n: n}
			}
			count = n
			first += ks.Find.FirstKey
			last = first + int(n) - 1
		default:
			return dst, failure{code: failUnknownSpec}
		}
		if step < 1 {
			return dst, failure{code: failUnknownSpec}
		}
		if channels && ks.Find.Kind == FindRange && last == first-1 {
			continue // SUNSUBSCRIBE without channels: none, not an error
		}
		if first < 1 || last >= argc || last < first || first >= argc {
			if count >= 0 {
				return dst, failure{code: failKeyCountTooLarge, n: count}
			}
			return dst, failure{code: failOutOfRange}
		}
		// A step larger than what is left ends the range; k += step could
		// otherwise overflow into negative indexes (a server's key spec
		// may carry any keystep).
		for k := first; ; k += step {
			dst = append(dst, k-1)
			if last-k < step {
				break
			}
		}
		if ks.Flags&KeyIncomplete != 0 {
			return dst, failure{code: failIncomplete}
		}
	}
	return dst, failure{}
}

// findKeyword returns the argv index just after the keyword, or 0 when the
// keyword is absent. A positive start searches forward from argv[start] up
// to, but not including, the last argument (a keyword there could not be
// followed by a key); a negative start searches backward from
// argv[argc+start] down to argv[1].
func findKeyword(args []any, keyword string, start int) int {
	argc := len(args) + 1
	if start > 0 {
		for k := start; k < argc-1; k++ {
			if argIs(args[k-1], keyword) {
				return k + 1
			}
		}
		return 0
	}
	for k := argc + start; k >= 1; k-- {
		if k < argc && argIs(args[k-1], keyword) {
			return k + 1
		}
	}
	return 0
}

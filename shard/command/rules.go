package command

// keyRule finds the keys of a command whose key specs the server cannot
// evaluate. It receives the arguments after the command name and appends
// key indexes into them to dst.
type keyRule func(args []any, dst []int) []int

// rules are the hand-written key rules, used (as the server uses its own
// code) when evaluating the key specs fails: a spec of unknown type, or an
// incomplete spec that matched. Every command with such a spec has a rule
// here; a test checks it.
var rules = map[string]keyRule{
	"sort":    sortKeys,
	"sort_ro": sortROKeys,
	"migrate": migrateKeys,
}

// sortROKeys: SORT_RO key [BY pattern] [LIMIT offset count] [GET pattern ...]
// [ASC|DESC] [ALPHA]. Only the first argument is known to be a key; BY and
// GET patterns name keys derived from the data.
func sortROKeys(_ []any, dst []int) []int {
	return append(dst, 0)
}

// sortKeys: SORT key [BY pattern] [LIMIT offset count] [GET pattern ...]
// [ASC|DESC] [ALPHA] [STORE destination]. The first argument is read; the
// argument after the last STORE option is written. LIMIT's two arguments
// and the argument of GET and BY are skipped, so a pattern spelled "store"
// is not taken for the option; a STORE that ends the call is ignored.
func sortKeys(args []any, dst []int) []int {
	dst = append(dst, 0)
	store := -1
	for k := 1; k < len(args); k++ {
		a := args[k]
		switch {
		case argIs(a, "limit"):
			k += 2
		case argIs(a, "get"), argIs(a, "by"):
			k++
		case argIs(a, "store") && k+1 < len(args):
			store = k + 1
		}
	}
	if store >= 0 {
		dst = append(dst, store)
	}
	return dst
}

// migrateKeys: MIGRATE host port key|"" destination-db timeout [COPY]
// [REPLACE] [AUTH password | AUTH2 username password] [KEYS key ...].
// Without KEYS the key is the third argument. With KEYS (looked for among
// the options, skipping the arguments of AUTH and AUTH2) the keys are every
// argument after it, and the third argument must be empty, otherwise the
// call is invalid and has no keys.
func migrateKeys(args []any, dst []int) []int {
	const opts = 5 // host port key db timeout
	if len(args) > opts {
		for k := opts; k < len(args); k++ {
			a := args[k]
			switch {
			case argIs(a, "keys"):
				if argLen(args[2]) != 0 {
					return dst
				}
				for j := k + 1; j < len(args); j++ {
					dst = append(dst, j)
				}
				return dst
			case argIs(a, "auth"):
				k++
			case argIs(a, "auth2"):
				k += 2
			}
		}
	}
	return append(dst, 2)
}

package command

// maxName bounds the names Lookup folds on the stack; no command or
// "parent|sub" name comes close.
const maxName = 64

// index maps every lower-case name, "parent|sub" included, to its entry.
var index = buildIndex(table)

func buildIndex(cmds []*Info) map[string]*Info {
	m := make(map[string]*Info, 2*len(cmds))
	for _, c := range cmds {
		c.finish()
		m[c.Name] = c
		for _, s := range c.Subcommands {
			m[s.Name] = s
		}
	}
	return m
}

// Lookup returns the command named name in any mix of case ("get", "GET",
// "Get"), or nil when the table has no such command. Subcommands are found
// by their full name, such as "object|encoding". Lookup does not allocate.
func Lookup(name string) *Info {
	if len(name) > maxName {
		return nil
	}
	var buf [maxName]byte
	n := copy(buf[:], name)
	lower(buf[:n])
	return index[string(buf[:n])]
}

// All returns every top-level command, sorted by name. Subcommands hang
// off their containers. The slice is a copy; the entries are shared.
func All() []*Info {
	return append([]*Info(nil), table...)
}

// lookupSub finds the subcommand "parent|name".
func lookupSub(parent, name string) *Info {
	if len(parent)+1+len(name) > maxName {
		return nil
	}
	var buf [maxName]byte
	n := copy(buf[:], parent)
	buf[n] = '|'
	n++
	m := copy(buf[n:], name)
	lower(buf[n : n+m])
	return index[string(buf[:n+m])]
}

// lookupSubBytes is lookupSub for a name held in bytes.
func lookupSubBytes(parent string, name []byte) *Info {
	if len(parent)+1+len(name) > maxName {
		return nil
	}
	var buf [maxName]byte
	n := copy(buf[:], parent)
	buf[n] = '|'
	n++
	m := copy(buf[n:], name)
	lower(buf[n : n+m])
	return index[string(buf[:n+m])]
}

// subFromArg finds the subcommand of c named by the argument a.
func subFromArg(c *Info, a any) *Info {
	switch v := a.(type) {
	case string:
		return lookupSub(c.Name, v)
	case []byte:
		return lookupSubBytes(c.Name, v)
	}
	return lookupSub(c.Name, ArgText(a))
}

func lower(b []byte) {
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
}

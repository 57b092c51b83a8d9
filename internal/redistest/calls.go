package redistest

import (
	"fmt"
	"strconv"
	"strings"
)

// CommandCalls returns how many times the server has run the command
// name (lowercase, as INFO commandstats spells it: "get", "migrate",
// "client|setname"), by the server's own count; 0 when it never has.
// Tests use it to tell which server served a command, whatever the
// client's own statistics say.
func (s *Server) CommandCalls(name string) (int, error) {
	info, err := s.Do("INFO", "commandstats")
	if err != nil {
		return 0, err
	}
	prefix := "cmdstat_" + name + ":calls="
	for line := range strings.Lines(info) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), prefix)
		if !ok {
			continue
		}
		if i := strings.IndexByte(rest, ','); i >= 0 {
			rest = rest[:i]
		}
		n, err := strconv.Atoi(rest)
		if err != nil {
			return 0, fmt.Errorf("%w: INFO commandstats line %q", ErrInvalid, line)
		}
		return n, nil
	}
	return 0, nil
}

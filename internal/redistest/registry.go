package redistest

import (
	"errors"
	"slices"
	"sync"
)

// live holds every server started by this process and not yet stopped;
// dirs holds the directory of every server ever started (a server's
// working directory), which tests use to look for leftover processes.
var registry = struct {
	sync.Mutex
	live map[*Server]struct{}
	dirs []string
}{live: make(map[*Server]struct{})}

func register(s *Server) {
	registry.Lock()
	defer registry.Unlock()
	registry.live[s] = struct{}{}
	registry.dirs = append(registry.dirs, s.Dir)
}

func unregister(s *Server) {
	registry.Lock()
	defer registry.Unlock()
	delete(registry.live, s)
}

func liveServers() []*Server {
	registry.Lock()
	defer registry.Unlock()
	out := make([]*Server, 0, len(registry.live))
	for s := range registry.live {
		out = append(out, s)
	}
	return out
}

func startedDirs() []string {
	registry.Lock()
	defer registry.Unlock()
	return slices.Clone(registry.dirs)
}

// RunningPIDs returns the process ids of the redis-server processes this
// process started that are still running (paused ones included), sorted.
// A TestMain can check that it is empty after the tests ran.
func RunningPIDs() []int {
	var pids []int
	for _, s := range liveServers() {
		if pid := s.PID(); pid != 0 {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids
}

// StopAll stops every server this process started and has not stopped
// yet, as a last line of defence in a TestMain or a signal handler.
func StopAll() error {
	var errs []error
	for _, s := range liveServers() {
		errs = append(errs, s.Stop())
	}
	return errors.Join(errs...)
}

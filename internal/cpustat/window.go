package cpustat

import "time"

// Window measures the CPU time this process and its running children
// named Name spend between Start and End. Reading the children's clocks
// scans every process of the system, which costs this process CPU time of
// its own (milliseconds on a busy machine): Start scans before it reads
// this process's clock and End after, so that neither scan is counted as
// the work measured.
type Window struct {
	Name              string
	process, children time.Duration
}

// Start begins a window for the children named name (see Children).
func Start(name string) Window {
	children := Children(name)
	return Window{Name: name, process: Process(), children: children}
}

// End returns the CPU time this process and the children spent since
// Start (0 for what the system does not tell).
func (w Window) End() (process, children time.Duration) {
	process = Process() - w.process
	children = Children(w.Name) - w.children
	return process, children
}

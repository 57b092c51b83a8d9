package peers

import (
	"testing"

	"github.com/shardis/shardis/bench"
)

// The client CPU a meter reports starts after its own reading of the
// servers' clocks (a scan of /proc, a few milliseconds of this process's
// CPU on a busy machine), so that the scan is not charged to the client
// measured.
func TestReview15MeterLeavesItsServerScanOut(t *testing.T) {
	if bench.ProcessCPU() == 0 {
		t.Skip("no process CPU time on this system")
	}
	const scans = 10
	c0 := bench.ProcessCPU()
	for range scans {
		bench.ChildrenCPU("redis-server")
	}
	scan := (bench.ProcessCPU() - c0) / scans
	if scan <= 0 {
		t.Skip("no CPU time measured for a scan of the processes")
	}
	m := startMeterFor("redis-server")
	charged := bench.ProcessCPU() - m.cpu
	if charged >= scan/2 {
		t.Errorf("a meter started %v into its window; a scan of the processes costs %v", charged, scan)
	}
}

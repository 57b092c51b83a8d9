package cpustat

import "testing"

// A window that holds no work counts none of the CPU its own scans of
// the processes cost.
func TestReview19WindowLeavesItsScansOut(t *testing.T) {
	if Process() == 0 {
		t.Skip("no process CPU time on this system")
	}
	const scans = 20
	c0 := Process()
	for range scans {
		Children("redis-server")
	}
	scan := (Process() - c0) / scans
	if scan <= 0 {
		t.Skip("no CPU time measured for a scan of the processes")
	}
	// The median of several empty windows: one may catch a garbage
	// collection or the runtime's own work.
	var got []int64
	for range 9 {
		process, _ := Start("redis-server").End()
		got = append(got, int64(process))
	}
	for i := range got {
		for j := i + 1; j < len(got); j++ {
			if got[j] < got[i] {
				got[i], got[j] = got[j], got[i]
			}
		}
	}
	if median := got[len(got)/2]; median >= int64(scan/2) {
		t.Errorf("an empty window counted %v ns of this process's CPU; a scan of the processes costs %v", median, scan)
	}
}

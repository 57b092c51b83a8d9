package placement

import (
	"os"
	"strings"
)

// loadAverage returns the 1-minute load average from /proc/loadavg, or ""
// where there is none.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		return ""
	}
	return fields[0]
}

// loadSpan joins the load averages before and after a run.
func loadSpan(before string) string {
	after := loadAverage()
	if before == "" || after == "" {
		return ""
	}
	return before + " -> " + after
}

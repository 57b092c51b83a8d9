package bench

import (
	"os"
	"strings"
)

// LoadAverage returns the 1-minute load average from /proc/loadavg, or ""
// where there is none.
func LoadAverage() string {
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

// LoadSpan joins the load averages before and after a run.
func LoadSpan(before string) string {
	after := LoadAverage()
	if before == "" || after == "" {
		return ""
	}
	return before + " -> " + after
}

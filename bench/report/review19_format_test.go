package report

import "testing"

// A figure that rounds up to the next unit is written in that unit, as
// every other figure of that size is.
func TestReview19UnitsAtTheirBoundaries(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{micros(999.4), "999 µs"},
		{micros(999.5), "1.00 ms"},
		{micros(999.7), "1.00 ms"},
		{micros(1000), "1.00 ms"},
		{micros(1234.5), "1.23 ms"},
		{bytesText(999), "999 B"},
		{bytesText(1000), "1.0 kB"},
		{bytesText(999_949), "999.9 kB"},
		{bytesText(999_950), "1.00 MB"},
		{bytesText(999_999), "1.00 MB"},
		{bytesText(1_000_000), "1.00 MB"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

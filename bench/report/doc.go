// Package report presents the results of the shardis benchmarks: plain text
// tables for a terminal, and a directory holding a Markdown report
// (report.md) with SVG charts that the report embeds by relative links.
//
// WritePlacement and PlacementText present a placement.Report (the offline
// strategy comparison); WriteE2E and E2EText an e2e.Report (throughput and
// latency against running servers).
//
// The charts are drawn with gonum.org/v1/plot: it is pure Go, so reports are
// produced offline by the same binary, with no JavaScript, browser or
// external tool; it renders titled axes, tick labels and legends; and its
// SVG files display as they are in a browser and on GitHub. The text is set
// in Liberation Sans, with Arial, Helvetica and the generic sans-serif as
// fallbacks in the SVG, so that a viewer without the font keeps the layout
// (Arial has the same metrics).
//
// All functions are safe for concurrent use: they only read their
// arguments.
package report

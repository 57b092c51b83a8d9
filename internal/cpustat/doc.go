// Package cpustat reads the CPU time of this process and of its running
// child processes, for benchmarks that report CPU per operation.
package cpustat

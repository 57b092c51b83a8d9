package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// stringList is a flag that may be given several times.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// commandLine returns the command a report quotes as its origin: "shardis"
// followed by args, each quoted for a POSIX shell when it needs it, a URL
// without its user info and options (redactArg).
func commandLine(args []string) string {
	parts := []string{"shardis"}
	for _, a := range args {
		if strings.Contains(a, "://") {
			a = redactArg(a) // a --config URL's password stays out of the report
		}
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:,=@%+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// writeJSON prints v as one indented JSON document.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("shardis: encode JSON: %w", err)
	}
	return nil
}

// listFiles tells where a report went.
func listFiles(w io.Writer, paths []string) {
	fmt.Fprintf(w, "Wrote %s\n", strings.Join(paths, ", "))
}

// makeReportDir makes the --report directory, if any, before a run: one
// that cannot be made (under a regular file, without permission) was
// found out only once the run was over, its figures going to the
// terminal alone. It is a usage error, as a config that cannot be read.
func makeReportDir(dir string) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usageError{fmt.Errorf("--report: %w", err)}
	}
	f, err := os.CreateTemp(dir, ".shardis-report-*")
	if err != nil {
		return usageError{fmt.Errorf("--report: the directory cannot be written: %w", err)}
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

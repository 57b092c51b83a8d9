// Command shardis is the command-line companion of the shardis library:
// it shows where keys live (locate, slot), runs a demo, and compares
// sharding strategies.
//
// Usage:
//
//	shardis <command> [flags] [args]
//
// Run "shardis help" for the list of commands.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/shard"
)

// command is one verb of the CLI. Each verb lives in its own file and
// registers itself from an init function.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *cliEnv, args []string) error
}

// cliEnv carries the process streams so that tests can run verbs in-process.
type cliEnv struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

var commands = map[string]command{}

func register(c command) { commands[c.name] = c }

// errUsage marks an error caused by wrong arguments; main exits with code 2.
var errUsage = errors.New("usage")

// errIncomplete marks a check that could not be done (verify: a node that
// did not answer), which exits with status 3, so that a script tells it
// from a check that found a problem (status 1).
var errIncomplete = errors.New("check incomplete")

// errInterrupted marks a command that stopped short because it was
// interrupted (Ctrl-C, SIGTERM): main exits with 128 plus the signal's
// number (130, 143), as a shell reports a process that a signal ended,
// so that a script tells "stopped, run it again" from a failure.
var errInterrupted = errors.New("interrupted")

// signalCause is the cause of main's context once a signal ended it.
type signalCause struct{ sig os.Signal }

func (c signalCause) Error() string { return "interrupted by " + c.sig.String() }

func main() {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	// The first signal asks the command to stop cleanly; from then on
	// the signals have their default effect again, so that a second
	// Ctrl-C ends a command whose clean-up waits on a hung server.
	go func() {
		s := <-sigs
		signal.Stop(sigs)
		cancel(signalCause{s})
	}()
	env := &cliEnv{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}
	os.Exit(run(ctx, env, os.Args[1:]))
}

// interruptedStatus is the exit status of a command interrupted by the
// signal that ended ctx (main's): 128 plus its number, 130 (SIGINT) when
// no signal is known.
func interruptedStatus(ctx context.Context) int {
	var c signalCause
	if errors.As(context.Cause(ctx), &c) {
		if s, ok := c.sig.(syscall.Signal); ok {
			return 128 + int(s)
		}
	}
	return 128 + int(syscall.SIGINT)
}

// run executes the verb named by args[0] and returns the process exit code.
func run(ctx context.Context, env *cliEnv, args []string) int {
	if len(args) == 0 {
		// A usage error: the help goes to stderr, as for an unknown
		// command, and nothing to stdout, where a script reads data.
		printHelp(env.stderr)
		return 2
	}
	if args[0] == "help" && len(args) > 1 {
		// "shardis help reshard" is "shardis reshard -h" (and "shardis
		// help bench e2e" is "shardis bench e2e -h").
		return run(ctx, env, append(args[1:len(args):len(args)], "-h"))
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		printHelp(env.stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(env.stderr, "shardis: unknown command %q\n\n", redactArg(args[0]))
		printHelp(env.stderr)
		return 2
	}
	if err := c.run(ctx, env, args[1:]); err != nil {
		if errors.Is(err, errHelp) {
			return 0 // the usage is printed (parseFlags)
		}
		fmt.Fprintf(env.stderr, "shardis %s: %s\n", c.name, errtext.Cause(err))
		// A config that cannot be read, parsed or used is a usage error
		// too, in every command: status 1 says the work itself failed.
		if errors.Is(err, errUsage) || errors.Is(err, shard.ErrBadConfig) {
			return 2
		}
		if errors.Is(err, errInterrupted) {
			return interruptedStatus(ctx)
		}
		if errors.Is(err, errIncomplete) {
			return 3
		}
		return 1
	}
	return 0
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "shardis - spread Redis data over many servers")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: shardis <command> [flags] [args]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'shardis <command> -h' (or 'shardis help <command>') for a command's flags.")
	fmt.Fprintln(w, "Exit status: 0 done, 1 the command failed at its work, 2 a usage error or a")
	fmt.Fprintln(w, "config that cannot be read, parsed or used, 3 an incomplete result (where a")
	fmt.Fprintln(w, "command's help says so), 130 (143 for SIGTERM) a reshard, verify or bench")
	fmt.Fprintln(w, "interrupted before its end: run it again.")
}

package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
)

func init() {
	register(command{name: "subscribe", summary: "print the messages of channels, patterns or shard channels until interrupted", run: runSubscribe})
}

func runSubscribe(ctx context.Context, env *cliEnv, args []string) error {
	fs := flag.NewFlagSet("subscribe", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	configFile := fs.String("config", "", "YAML or JSON client config file (or a URL, as --url)")
	url := fs.String("url", "", "redis-ring:// or redis-cluster:// URL (instead of --config)")
	pattern := fs.Bool("pattern", false, "the names are patterns (PSUBSCRIBE)")
	sharded := fs.Bool("sharded", false, "the names are shard channels (SSUBSCRIBE)")
	keyspace := fs.String("keyspace", "", "subscribe to keyspace events on every shard or master; the value, if not \"-\", is set as notify-keyspace-events (e.g. KEA)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: shardis subscribe (--config FILE | --url URL) [--pattern | --sharded] NAME...")
		fmt.Fprintln(fs.Output(), "       shardis subscribe (--config FILE | --url URL) --keyspace FLAGS|- [PATTERN...]")
		fmt.Fprintln(fs.Output(), "Prints one line per message until interrupted: CHANNEL<TAB>PAYLOAD, or")
		fmt.Fprintln(fs.Output(), "CHANNEL<TAB>PATTERN<TAB>PAYLOAD for patterns and keyspace events. Tabs,")
		fmt.Fprintln(fs.Output(), "newlines and backslashes inside names and payloads are written as \\t, \\n, \\r, \\\\.")
		fmt.Fprintln(fs.Output(), "Confirmations and errors go to stderr; a node that cannot be reached is")
		fmt.Fprintln(fs.Output(), "reported there, and its names are subscribed once it answers (with")
		fmt.Fprintln(fs.Output(), "--keyspace, configured first); with no node answering at the start it")
		fmt.Fprintln(fs.Output(), "exits 1.")
		fs.PrintDefaults()
	}
	if err := parseFlags(env, fs, args, false); err != nil {
		return err
	}
	names := fs.Args()
	switch {
	case *pattern && *sharded:
		return fmt.Errorf("%w: --pattern and --sharded exclude each other", errUsage)
	case *keyspace != "" && (*pattern || *sharded):
		return fmt.Errorf("%w: --keyspace takes no --pattern or --sharded", errUsage)
	case *keyspace == "" && len(names) == 0:
		return fmt.Errorf("%w: name at least one channel or pattern", errUsage)
	case (*configFile == "") == (*url == ""):
		return fmt.Errorf("%w: give exactly one of --config FILE and --url URL", errUsage)
	}
	var (
		cfg shard.Config
		err error
	)
	if *url != "" {
		cfg, err = shard.ParseURL(*url)
	} else {
		cfg, err = loadTopology(*configFile)
	}
	if err != nil {
		return err
	}
	c, err := shard.New(ctx, cfg)
	if err != nil {
		if ctx.Err() != nil {
			return nil // interrupted before the first message: the normal end too
		}
		return err
	}
	defer c.Close()

	var sub *shard.Subscription
	if *keyspace != "" {
		opts := shard.KeyspaceOptions{}
		if *keyspace != "-" {
			opts.Enable = *keyspace
		}
		if len(names) == 0 {
			names = shard.DefaultKeyspacePatterns
		}
		sub, err = subscribeNames(ctx, env, c, func() (*shard.Subscription, error) { return c.NewKeyspaceSubscription(opts) }, true, false, names)
	} else {
		sub, err = subscribeNames(ctx, env, c, func() (*shard.Subscription, error) { return c.NewSubscription(shard.SubscriptionOptions{}) }, *pattern, *sharded, names)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil // interrupted while subscribing
		}
		return err
	}
	defer sub.Close()
	withPattern := *pattern || *keyspace != ""
	out := bufio.NewWriter(env.stdout)
	defer out.Flush()
	// A context that has ended: Receive with it returns what is waiting
	// and never blocks.
	now, nowCancel := context.WithCancel(context.Background())
	nowCancel()
	for {
		v, err := sub.Receive(now)
		if err != nil && errors.Is(err, context.Canceled) && !errors.Is(err, shard.ErrSubscriptionClosed) {
			// Nothing waiting: show what was printed before waiting for
			// more. (Buffered is no guide: it also counts the messages
			// held back while their channel moves to another node,
			// which Receive does not return until the move is over.)
			if err := out.Flush(); err != nil {
				return err
			}
			v, err = sub.Receive(ctx)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil // interrupted: the normal end
			}
			var se *shard.SubscribeError
			if errors.As(err, &se) {
				fmt.Fprintf(env.stderr, "shardis subscribe: %s\n", errtext.Cause(err))
				continue
			}
			return err
		}
		switch m := v.(type) {
		case redis.Message:
			if withPattern {
				fmt.Fprintf(out, "%s\t%s\t%s\n", escapeField(m.Channel), escapeField(m.Pattern), escapeField(string(m.Data)))
			} else {
				fmt.Fprintf(out, "%s\t%s\n", escapeField(m.Channel), escapeField(string(m.Data)))
			}
		case redis.Subscription:
			fmt.Fprintf(env.stderr, "%s %s (%d)\n", m.Kind, m.Channel, m.Count)
		}
	}
}

// subscribeNames subscribes to names on a subscription made by
// newSub (keyspace patterns go to every node). A node that cannot be
// reached now (a ring shard down, or all of them) does not end the
// command: the error, which names the node, goes to stderr, the names of
// the other nodes are printed from now on, and the subscription
// subscribes the node's names once it is back (their confirmations are
// printed then), as it does for a node lost later. A name a server
// refused, credentials it refused, or another refusal of a server (a
// CONFIG SET of --keyspace that the user may not run) end it with the
// error.
func subscribeNames(ctx context.Context, env *cliEnv, c *shard.Client, newSub func() (*shard.Subscription, error), pattern, sharded bool, names []string) (*shard.Subscription, error) {
	sub, err := newSub()
	if err != nil {
		return nil, err
	}
	switch {
	case pattern:
		err = sub.PSubscribe(ctx, names...)
	case sharded:
		err = sub.SSubscribe(ctx, names...)
	default:
		err = sub.Subscribe(ctx, names...)
	}
	if err == nil {
		return sub, nil
	}
	if ctx.Err() == nil && nodesUnreachable(err) && anyNodeAnswers(ctx, c) {
		if st := sub.Stats(); st.Channels+st.Patterns+st.ShardChannels > 0 {
			fmt.Fprintf(env.stderr, "shardis subscribe: %s\nshardis subscribe: the names of the nodes above are subscribed once they answer\n", errtext.Cause(err))
			return sub, nil
		}
	}
	sub.Close()
	return nil, err
}

// anyNodeAnswers reports whether at least one node answers a PING within
// a few seconds: with none (a mistyped address, every server stopped)
// the command ends with the error rather than wait for one forever.
func anyNodeAnswers(ctx context.Context, c *shard.Client) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var answered atomic.Int32
	c.ForEachNode(ctx, func(ctx context.Context, _ shard.Node, conn redis.Conn) error {
		if _, err := redis.DoContext(conn, ctx, "PING"); err != nil {
			return err
		}
		answered.Add(1)
		return nil
	})
	return answered.Load() > 0
}

// nodesUnreachable reports whether err says only that nodes could not be
// reached (or no node can carry a name now, or cannot serve for a while:
// BUSY, LOADING...), which the subscription retries on its own: not a
// name a server refused, nor wrong credentials, nor another error reply
// (NOPERM for the CONFIG SET of --keyspace, say), which retrying would
// only repeat.
func nodesUnreachable(err error) bool {
	var se *shard.SubscribeError
	if errors.As(err, &se) || errors.Is(err, pool.ErrAuth) {
		return false
	}
	var re redis.Error
	if errors.As(err, &re) && !transientReply(re) {
		return false
	}
	var ne *shard.NodeError
	return errors.As(err, &ne) || errors.Is(err, shard.ErrNoNodes)
}

// transientReply reports whether a server's error reply says that it
// cannot serve for now rather than that it refuses.
func transientReply(re redis.Error) bool {
	code, _, _ := strings.Cut(string(re), " ")
	switch code {
	case "BUSY", "LOADING", "CLUSTERDOWN", "TRYAGAIN", "MASTERDOWN":
		return true
	}
	return false
}

var fieldEscaper = strings.NewReplacer("\\", `\\`, "\t", `\t`, "\n", `\n`, "\r", `\r`)

// escapeField keeps a name or payload on one line and in one column.
func escapeField(s string) string {
	if !strings.ContainsAny(s, "\\\t\n\r") {
		return s
	}
	return fieldEscaper.Replace(s)
}

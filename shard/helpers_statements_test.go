package shard_test

import (
	"context"
	"slices"
	"sync"

	"github.com/shardis/shardis/shard"
)

// statementLog records the whole statements (Statement(0)) that hooks
// see: every operation's (Finish), every attempt's (Command) and, when
// asked, every pipeline's (Pipeline).
type statementLog struct {
	mu    sync.Mutex
	stmts []string
}

// hooks returns Hooks that record into l; pipelines says whether
// pipelines' statements are recorded too.
func (l *statementLog) hooks(pipelines bool) *shard.Hooks {
	h := &shard.Hooks{
		Finish:  func(_ context.Context, op *shard.Op) { l.add(op.Statement(0)) },
		Command: func(_ context.Context, ev *shard.CommandEvent) { l.add(ev.Statement(0)) },
	}
	if pipelines {
		h.Pipeline = func(_ context.Context, ev *shard.PipelineEvent) { l.add(ev.Statement(0)) }
	}
	return h
}

func (l *statementLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stmts = append(l.stmts, s)
}

// all returns a copy of the statements recorded so far.
func (l *statementLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.stmts)
}

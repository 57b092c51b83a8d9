package shard

import (
	"context"
	"fmt"
	"runtime/debug"
)

// JoinHooks returns hooks that call each of hs in turn (nil ones are
// skipped): a tracer's hooks and a program's own callbacks, say. Start
// hooks run in order, each receiving the context the previous one
// returned; the others receive the last one.
//
// A hook that panics does not keep the hooks after it from running: a
// tracer whose Start ran still gets its Finish, whatever the program's
// own hooks joined before it do. Once they all ran, the first panic goes
// on (to the client, which recovers it: see PanicError, whose Value and
// Stack are the hook's own), and the operation keeps the context the
// Start hooks returned.
func JoinHooks(hs ...*Hooks) *Hooks {
	var list []*Hooks
	for _, h := range hs {
		if h != nil {
			list = append(list, h)
		}
	}
	switch len(list) {
	case 0:
		return nil
	case 1:
		return list[0]
	}
	out := &Hooks{}
	for _, h := range list {
		if h.Start != nil {
			out.Start = func(ctx context.Context, op *Op) context.Context {
				var first *joinedPanic
				for _, h := range list {
					if h.Start != nil {
						p := joinedCall(&first, func() {
							if next := h.Start(ctx, op); next != nil {
								ctx = next
							}
						})
						if p != nil && p.ctx != nil {
							ctx = p.ctx // a joined Start's, within this one
						}
					}
				}
				if first != nil {
					first.ctx = ctx
					panic(first)
				}
				return ctx
			}
		}
		if h.Finish != nil {
			out.Finish = func(ctx context.Context, op *Op) {
				var first *joinedPanic
				for _, h := range list {
					if h.Finish != nil {
						joinedCall(&first, func() { h.Finish(ctx, op) })
					}
				}
				first.repanic()
			}
		}
		if h.Command != nil {
			out.Command = func(ctx context.Context, ev *CommandEvent) {
				var first *joinedPanic
				for _, h := range list {
					if h.Command != nil {
						joinedCall(&first, func() { h.Command(ctx, ev) })
					}
				}
				first.repanic()
			}
		}
		if h.Pipeline != nil {
			out.Pipeline = func(ctx context.Context, ev *PipelineEvent) {
				var first *joinedPanic
				for _, h := range list {
					if h.Pipeline != nil {
						joinedCall(&first, func() { h.Pipeline(ctx, ev) })
					}
				}
				first.repanic()
			}
		}
		if h.Dial != nil {
			out.Dial = func(ctx context.Context, ev *DialEvent) {
				var first *joinedPanic
				for _, h := range list {
					if h.Dial != nil {
						joinedCall(&first, func() { h.Dial(ctx, ev) })
					}
				}
				first.repanic()
			}
		}
		if h.Refresh != nil {
			out.Refresh = func(ctx context.Context, ev *RefreshEvent) {
				var first *joinedPanic
				for _, h := range list {
					if h.Refresh != nil {
						joinedCall(&first, func() { h.Refresh(ctx, ev) })
					}
				}
				first.repanic()
			}
		}
		if h.NodeState != nil {
			out.NodeState = func(ev NodeEvent) {
				var first *joinedPanic
				for _, h := range list {
					if h.NodeState != nil {
						joinedCall(&first, func() { h.NodeState(ev) })
					}
				}
				first.repanic()
			}
		}
		if h.SlotMap != nil {
			out.SlotMap = func(ev SlotMapEvent) {
				var first *joinedPanic
				for _, h := range list {
					if h.SlotMap != nil {
						joinedCall(&first, func() { h.SlotMap(ev) })
					}
				}
				first.repanic()
			}
		}
		if h.Panic != nil {
			out.Panic = func(err *PanicError) {
				var first *joinedPanic
				for _, h := range list {
					if h.Panic != nil {
						joinedCall(&first, func() { h.Panic(err) })
					}
				}
				first.repanic()
			}
		}
	}
	return out
}

// joinedPanic is the panic of a hook joined by JoinHooks, raised again
// once the other hooks ran: the hook's value and its stack at the panic,
// and for Start the context the Start hooks returned.
type joinedPanic struct {
	value any
	stack []byte
	ctx   context.Context
}

// Error describes the panic as the hook's value does.
func (p *joinedPanic) Error() string { return fmt.Sprintf("%v", p.value) }

// Unwrap returns the hook's value when it is an error.
func (p *joinedPanic) Unwrap() error {
	err, _ := p.value.(error)
	return err
}

// repanic raises p again; a nil p does nothing.
func (p *joinedPanic) repanic() {
	if p != nil {
		panic(p)
	}
}

// joinedCall runs f, one of the joined hooks, and recovers its panic:
// it returns it, and keeps it in *first when it is the first.
func joinedCall(first **joinedPanic, f func()) (p *joinedPanic) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		if jp, ok := v.(*joinedPanic); ok {
			p = jp // hooks joined twice: the innermost hook's
		} else {
			p = &joinedPanic{value: v, stack: debug.Stack()}
		}
		if *first == nil {
			*first = p
		}
	}()
	f()
	return nil
}

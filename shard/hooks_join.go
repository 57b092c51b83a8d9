package shard

import "context"

// JoinHooks returns hooks that call each of hs in turn (nil ones are
// skipped): a tracer's hooks and a program's own callbacks, say. Start
// hooks run in order, each receiving the context the previous one
// returned; the others receive the last one.
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
				for _, h := range list {
					if h.Start != nil {
						if next := h.Start(ctx, op); next != nil {
							ctx = next
						}
					}
				}
				return ctx
			}
		}
		if h.Finish != nil {
			out.Finish = func(ctx context.Context, op *Op) {
				for _, h := range list {
					if h.Finish != nil {
						h.Finish(ctx, op)
					}
				}
			}
		}
		if h.Command != nil {
			out.Command = func(ctx context.Context, ev *CommandEvent) {
				for _, h := range list {
					if h.Command != nil {
						h.Command(ctx, ev)
					}
				}
			}
		}
		if h.Pipeline != nil {
			out.Pipeline = func(ctx context.Context, ev *PipelineEvent) {
				for _, h := range list {
					if h.Pipeline != nil {
						h.Pipeline(ctx, ev)
					}
				}
			}
		}
		if h.Dial != nil {
			out.Dial = func(ctx context.Context, ev *DialEvent) {
				for _, h := range list {
					if h.Dial != nil {
						h.Dial(ctx, ev)
					}
				}
			}
		}
		if h.Refresh != nil {
			out.Refresh = func(ctx context.Context, ev *RefreshEvent) {
				for _, h := range list {
					if h.Refresh != nil {
						h.Refresh(ctx, ev)
					}
				}
			}
		}
		if h.NodeState != nil {
			out.NodeState = func(ev NodeEvent) {
				for _, h := range list {
					if h.NodeState != nil {
						h.NodeState(ev)
					}
				}
			}
		}
		if h.SlotMap != nil {
			out.SlotMap = func(ev SlotMapEvent) {
				for _, h := range list {
					if h.SlotMap != nil {
						h.SlotMap(ev)
					}
				}
			}
		}
		if h.Panic != nil {
			out.Panic = func(err *PanicError) {
				for _, h := range list {
					if h.Panic != nil {
						h.Panic(err)
					}
				}
			}
		}
	}
	return out
}

package shard

import "time"

// autoWaiting is how many commands may wait for a node's writer before
// callers wait to queue theirs: twice a full batch. The queue lives as
// long as the client, idle or not, so it is kept small (8 KiB per node
// instead of the 32 KiB of autoQueue); callers beyond it wait for the
// writer to take a batch, which it does at once.
const autoWaiting = 2 * maxAutoBatch

// await waits for the next command of the pipeline. While the writer
// holds a connection it waits at most pipeIdleCheck and then returns nil,
// so that the writer hands the idle connection back to the pool: its
// reader goroutine ends and its reply queue is freed, and an idle node
// keeps no borrowed connection. stop is true when the client is closing.
// idle is the writer's timer, stopped between calls.
func (p *autoPipe) await(holding bool, closed <-chan struct{}, idle *time.Timer) (r *pipeReq, stop bool) {
	select {
	case r := <-p.reqs:
		return r, false
	default:
	}
	if !holding {
		select {
		case r := <-p.reqs:
			return r, false
		case <-closed:
			return nil, true
		}
	}
	idle.Reset(pipeIdleCheck)
	defer idle.Stop()
	select {
	case r := <-p.reqs:
		return r, false
	case <-closed:
		return nil, true
	case <-idle.C:
		return nil, false
	}
}

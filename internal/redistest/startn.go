package redistest

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// maxServers bounds how many servers one StartN or StartCluster may run.
const maxServers = 64

// StartN starts n servers with the same options, in parallel, and returns
// them in a fixed order. TLS servers share one throwaway CA, so one
// ClientConfig trusts them all. If any server fails, the others are
// stopped and the errors are returned (joined).
func StartN(n int, opts Options) ([]*Server, error) {
	return StartNContext(context.Background(), n, opts)
}

// StartNContext is StartN with a context that can cut the waits short.
func StartNContext(ctx context.Context, n int, opts Options) ([]*Server, error) {
	if n < 1 || n > maxServers {
		return nil, fmt.Errorf("%w: server count %d not in 1..%d", ErrInvalid, n, maxServers)
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if opts.TLS && opts.authority == nil {
		a, err := newAuthority()
		if err != nil {
			return nil, err
		}
		opts.authority = a
	}
	servers := make([]*Server, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			servers[i], errs[i] = StartContext(ctx, opts)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		stopAll(servers)
		return nil, err
	}
	return servers, nil
}

// stopAll stops the non-nil servers in parallel.
func stopAll(servers []*Server) error {
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		if s == nil {
			continue
		}
		wg.Go(func() { errs[i] = s.Stop() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

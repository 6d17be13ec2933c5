package backend

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/hotspotkit/hotspotkit/queue"
	"github.com/hotspotkit/hotspotkit/sqldb"
	"github.com/hotspotkit/hotspotkit/testkit/database"
)

// flushKiller is the kill-flusher fault: once armed, the next batch a queue worker has
// written (its COPY or statements done, its transaction open) has its backend terminated
// before the COMMIT, from a connection of its own, as if the server had lost that session.
// The worker's COMMIT then fails and the batch is retried: nothing may be written twice.
type flushKiller[T any] struct {
	queue.TxWriter[T]
	target database.Target

	mu    sync.Mutex
	armed chan killed // receives what was done, once
}

type killed struct {
	detail string
	err    error
}

func (k *flushKiller[T]) WriteBatch(ctx context.Context, tx sqldb.Tx, records []T) (int, error) {
	ops, err := k.TxWriter.WriteBatch(ctx, tx, records)
	if err != nil {
		return ops, err
	}
	k.mu.Lock()
	done := k.armed
	k.armed = nil
	k.mu.Unlock()
	if done != nil {
		detail, err := k.terminate(ctx, tx, len(records))
		done <- killed{detail, err}
	}
	return ops, nil
}

// terminate ends tx's session (its backend, its MySQL connection) and waits (up to 5 s)
// until it is gone.
func (k *flushKiller[T]) terminate(ctx context.Context, tx sqldb.Tx, n int) (string, error) {
	which, err := k.target.TerminateSessionOf(ctx, tx)
	if err != nil {
		return "", fmt.Errorf("terminating the flush's session: %w", err)
	}
	return fmt.Sprintf("flush %s terminated after writing a batch of %d records, before its COMMIT", which, n), nil
}

// arm makes the next batch's flush lose its connection, and waits until it has.
func (k *flushKiller[T]) arm(ctx context.Context) (string, error) {
	done := make(chan killed, 1)
	k.mu.Lock()
	k.armed = done
	k.mu.Unlock()
	select {
	case k := <-done:
		return k.detail, k.err
	case <-ctx.Done():
		k.mu.Lock()
		k.armed = nil
		k.mu.Unlock()
		return "", errors.New("not injected: no flush began before the run was over")
	}
}

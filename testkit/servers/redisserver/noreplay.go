package redisserver

import (
	"context"
	"errors"
	"net"

	"github.com/redis/go-redis/v9"
)

// NoReplay makes a cluster client never send a command again after its reply was lost, and
// returns o. go-redis's cluster client follows MOVED and ASK in the same loop in which it
// retries a command whose connection broke or timed out, whatever MaxRetries says; a retried
// XADD or script could then run twice. NoReplay gives every node's client a hook that turns
// such an error (sent, no reply) into one the loop does not retry, while a Redis error
// (MOVED, ASK, TRYAGAIN, CLUSTERDOWN: the command did not run) and a failed dial (nothing
// sent) still are. It covers single commands, scripts included, and the ASKING+command pair;
// a cluster client's pipeline is re-sent after a broken connection before any hook sees it,
// so send only idempotent commands in a pipeline. It replaces o.NewClient.
func NoReplay(o *redis.ClusterOptions) *redis.ClusterOptions {
	o.NewClient = func(opt *redis.Options) *redis.Client {
		c := redis.NewClient(opt)
		c.AddHook(noReplayHook{})
		return c
	}
	if o.MaxRedirects == 0 {
		o.MaxRedirects = 8 // a reshard may redirect a command twice per slot move
	}
	return o
}

type noReplayHook struct{}

func (noReplayHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (noReplayHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if mayHaveRun(err) {
			err = &OutcomeUnknownError{err: err}
			cmd.SetErr(err)
		}
		return err
	}
}

func (noReplayHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			if e := cmd.Err(); mayHaveRun(e) {
				cmd.SetErr(&OutcomeUnknownError{err: e})
			}
		}
		if mayHaveRun(err) {
			err = &OutcomeUnknownError{err: err}
		}
		return err
	}
}

// mayHaveRun reports whether err leaves open whether the server ran the command: not a
// Redis error (the server answered), not a failed dial or pool wait (nothing was sent).
func mayHaveRun(err error) bool {
	if err == nil || errors.Is(err, redis.ErrPoolTimeout) || errors.Is(err, redis.ErrClosed) {
		return false
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		return false
	}
	var unknown *OutcomeUnknownError
	if errors.As(err, &unknown) {
		return false
	}
	var op *net.OpError
	return !errors.As(err, &op) || op.Op != "dial"
}

// OutcomeUnknownError is a command's error after which the server may or may not have run it
// (a connection that broke or timed out after the command was sent). It hides the cause from
// go-redis's retry decision, so its message is the cause's and errors.Is matches only context
// errors through it.
type OutcomeUnknownError struct{ err error }

func (e *OutcomeUnknownError) Error() string { return e.err.Error() }

// Cause is the error as go-redis returned it.
func (e *OutcomeUnknownError) Cause() error { return e.err }

// Is matches the context errors the cause wraps (go-redis does not retry those either).
func (e *OutcomeUnknownError) Is(target error) bool {
	return (target == context.Canceled || target == context.DeadlineExceeded) && errors.Is(e.err, target)
}

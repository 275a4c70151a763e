package leasehold

import (
	"context"
	"errors"
	"fmt"
	"time"
)

var errGaveUp = errors.New("no answer before the retry deadline")

// tokenCall sends a Release, Extend or Check (or, with op P, a Ping) and retries it on any
// session until it is answered or giveUp passes (9.10, 11). They name an exact token (or
// nonce) and are safe to send again. It returns the answer and the send start of the attempt
// that was answered. stop (optional) ends the retries early.
func (c *Client) tokenCall(stop context.Context, op byte, key string, token uint64, lease uint8, giveUp time.Time) (answer, time.Time, error) {
	return c.tokenCallValue(stop, op, key, token, lease, nil, giveUp)
}

// tokenCallValue is tokenCall with a value (a V, 9.16.4: retried like an Extend). A session
// that cannot carry the request refuses it unsent (its *Error is returned, not retried).
func (c *Client) tokenCallValue(stop context.Context, op byte, key string, token uint64, lease uint8, value []byte, giveUp time.Time) (answer, time.Time, error) {
	backoff := 50 * time.Millisecond
	giveUpTimer := time.NewTimer(giveUp.Sub(c.now()))
	defer giveUpTimer.Stop()
	for {
		if !c.now().Before(giveUp) {
			return answer{}, time.Time{}, errGaveUp
		}
		r := newRequest(op, key, giveUp)
		r.token, r.lease, r.value = token, lease, value
		if op == opPing {
			r.nonce = c.nextID()
		}
		c.route(r)
		attempt := time.NewTimer(c.opts.ConnectTimeout + c.opts.ResponseGrace)
		var res result
		select {
		case res = <-r.done:
		case <-attempt.C:
			c.giveUpAttempt(r, "no answer in time")
			res = <-r.done
		case <-giveUpTimer.C:
			c.giveUpAttempt(r, "retry deadline")
			res = <-r.done
			if res.err == nil {
				attempt.Stop()
				return res.ans, r.sendStart, nil
			}
			attempt.Stop()
			return answer{}, time.Time{}, errGaveUp
		case <-stop.Done():
			c.giveUpAttempt(r, "context ended")
			attempt.Stop()
			return answer{}, time.Time{}, stop.Err()
		}
		attempt.Stop()
		if res.err == nil {
			return res.ans, r.sendStart, nil
		}
		if errors.Is(res.err, ErrClosed) {
			return answer{}, time.Time{}, ErrClosed
		}
		if res.err == errDeadlineUnsent {
			return answer{}, time.Time{}, errGaveUp
		}
		if !res.retry { // refused before sending (a session that cannot carry it, 9.13)
			return answer{}, time.Time{}, res.err
		}
		wait := time.NewTimer(backoff)
		select {
		case <-wait.C:
		case <-giveUpTimer.C:
			wait.Stop()
			return answer{}, time.Time{}, errGaveUp
		case <-stop.Done():
			wait.Stop()
			return answer{}, time.Time{}, stop.Err()
		}
		if backoff *= 2; backoff > time.Second {
			backoff = time.Second
		}
	}
}

// giveUpAttempt ends one attempt: a written one gives its session up (its answer may never
// come: the session is stuck), a queued one is simply not sent.
func (c *Client) giveUpAttempt(r *request, why string) {
	r.mu.Lock()
	s := r.sess
	written := r.state != stateQueued
	r.concludeLocked(result{err: errors.New(why), retry: true})
	r.mu.Unlock()
	if written && s != nil && why == "no answer in time" {
		s.close(fmt.Errorf("a %q request had no answer within the response grace", r.op))
	}
}

// callDeadline is the context's deadline, or now + TransportDeadline without one.
func (c *Client) callDeadline(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return c.now().Add(c.opts.TransportDeadline)
}

// Release releases a token handed over without its Ticket (from another process), retried on
// any session until the context's deadline (TransportDeadline without one). It returns nil
// when released, or an error matching ErrNotHeld or ErrExpired (no answer in time).
func (c *Client) Release(ctx context.Context, key string, token uint64) error {
	if msg := validKey(key); msg != "" {
		return newError(ErrInvalidArgument, "release", key, msg, nil)
	}
	a, _, err := c.tokenCall(ctx, opRelease, key, token, 0, c.callDeadline(ctx))
	return tokenOutcome("release", key, token, a, err)
}

// Extend extends a token handed over without its Ticket, as Release does. It returns nil when
// extended, or an error matching ErrNotHeld or ErrExpired.
func (c *Client) Extend(ctx context.Context, key string, token uint64, lease time.Duration) error {
	if msg := validKey(key); msg != "" {
		return newError(ErrInvalidArgument, "extend", key, msg, nil)
	}
	secs, err := wholeSeconds(lease, 1, "lease")
	if err != nil {
		return newError(ErrInvalidArgument, "extend", key, err.Error(), nil)
	}
	a, _, err := c.tokenCall(ctx, opExtend, key, token, secs, c.callDeadline(ctx))
	return tokenOutcome("extend", key, token, a, err)
}

// Check asks whether token is key's active grant now (PROTOCOL.md section 11), retried on any
// session until the context's deadline (TransportDeadline without one). true: current;
// false with a nil error: not current (definitive); an error matching ErrIndeterminate: no
// answer in time. Treat Indeterminate as not current.
func (c *Client) Check(ctx context.Context, key string, token uint64) (bool, error) {
	if msg := validKey(key); msg != "" {
		return false, newError(ErrInvalidArgument, "check", key, msg, nil)
	}
	return c.check(ctx, key, token, c.callDeadline(ctx))
}

func (c *Client) check(ctx context.Context, key string, token uint64, giveUp time.Time) (bool, error) {
	a, _, err := c.tokenCall(ctx, opCheck, key, token, 0, giveUp)
	switch {
	case err != nil && errors.Is(err, ErrClosed):
		return false, newError(ErrClosed, "check", key, "", nil)
	case err != nil:
		return false, newError(ErrIndeterminate, "check", key, fmt.Sprintf("token %d: no answer in time", token), err)
	}
	return a.op == opCheck, nil
}

// Ping measures one round trip to a server, within the context's deadline (TransportDeadline
// without one).
func (c *Client) Ping(ctx context.Context) (time.Duration, error) {
	a, sent, err := c.tokenCall(ctx, opPing, "", 0, 0, c.callDeadline(ctx))
	if err != nil {
		if errors.Is(err, ErrClosed) {
			return 0, newError(ErrClosed, "ping", "", "", nil)
		}
		return 0, newError(ErrUnavailable, "ping", "", "no answer in time", err)
	}
	_ = a
	return c.now().Sub(sent), nil
}

func tokenOutcome(op, key string, token uint64, a answer, err error) error {
	switch {
	case err != nil && errors.Is(err, ErrClosed):
		return newError(ErrClosed, op, key, "", nil)
	case err != nil:
		return newError(ErrExpired, op, key, fmt.Sprintf("token %d: no answer in time", token), err)
	case a.op == opNotHeld:
		return newError(ErrNotHeld, op, key, fmt.Sprintf("token %d", token), nil)
	}
	return nil
}

package leasehold

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Values (PROTOCOL.md section 17, client rule 9.16): a few opaque bytes that belong to one
// exclusive grant, set by its acquire (WithValue) or later by Ticket.Proclaim, shown with the
// grant's token to observers (Observe) and gone when the grant ends. A leader proclaims its
// identity as the value of the grant that makes it leader; its term is the grant's token.

// AcquireOption is an optional part of an Acquire or AcquireShared call.
type AcquireOption func(*acquireOptions)

type acquireOptions struct {
	value []byte
}

// WithValue gives an exclusive grant its value (PROTOCOL.md 17.2), sent in the acquire's M on
// a revision 1.4 session and shown to observers with the grant's token. It is refused with
// ErrInvalidArgument before anything is sent on AcquireShared (values belong to exclusive
// grants only) and when longer than 1024 bytes. A value that the session's server cannot carry
// (a 1.3 server, ProtocolRevision "1.3", or a value longer than the server's max-value-bytes,
// 0 when values are off) is not sent: ErrUnavailable, its reason naming the revision or the
// limit. An empty value is no value. The bytes are copied.
func WithValue(value []byte) AcquireOption {
	v := append([]byte(nil), value...)
	return func(o *acquireOptions) { o.value = v }
}

// acquireValue applies opts and checks the value for an acquire of the given kind.
func acquireValue(name, key string, shared bool, opts []AcquireOption) ([]byte, error) {
	var o acquireOptions
	for _, opt := range opts {
		opt(&o)
	}
	switch {
	case len(o.value) > 0 && shared:
		return nil, newError(ErrInvalidArgument, name, key, "a shared acquire carries no value (values belong to exclusive grants, PROTOCOL.md 17.2)", nil)
	case len(o.value) > maxValue:
		return nil, newError(ErrInvalidArgument, name, key, fmt.Sprintf("a value of %d bytes is longer than %d bytes", len(o.value), maxValue), nil)
	}
	if len(o.value) == 0 {
		return nil, nil
	}
	return o.value, nil
}

// Proclaim sets the value of this exclusive grant (V, PROTOCOL.md 17.1 and 9.16): it returns nil
// when the server set it (Proclaimed), or an error matching ErrNotHeld (the token is no longer
// the key's active grant: released, expired), ErrIndeterminate (no answer before the lease
// would have ended, or ctx ended first), ErrInvalidArgument (a shared ticket, a value longer
// than 1024 bytes), ErrUnavailable (the server cannot carry it: a 1.3 server, ProtocolRevision
// "1.3", a value longer than the server's max-value-bytes; nothing was sent) or ErrClosed.
// An empty value clears the grant's value.
//
// A ticket already released, or whose lease has certainly ended, answers ErrNotHeld without a
// request. Proclaims of one ticket go out one at a time in call order, so the last call's
// value is the one that stays; each is retried on any session like an Extend, also after the
// cluster's leader moved, until the lease would have ended. When ctx ends first the call
// returns ErrIndeterminate and its V keeps its turn until answered or given up, so a later
// Proclaim never overtakes it.
func (t *Ticket) Proclaim(ctx context.Context, value []byte) error {
	const op = "proclaim"
	switch {
	case t.shared:
		return newError(ErrInvalidArgument, op, t.key, "a shared ticket has no value (values belong to exclusive grants, PROTOCOL.md 17.2)", nil)
	case len(value) > maxValue:
		return newError(ErrInvalidArgument, op, t.key, fmt.Sprintf("a value of %d bytes is longer than %d bytes", len(value), maxValue), nil)
	case t.c.opts.ProtocolRevision == Revision13:
		return newError(ErrUnavailable, op, t.key, "a value needs revision 1.4 and ProtocolRevision is 1.3", nil)
	}
	if err := t.heldForProclaim(); err != nil {
		return err
	}
	value = append([]byte(nil), value...)
	if err := t.proclaims.lock(ctx); err != nil {
		return newError(ErrUnavailable, op, t.key, "the context ended while an earlier proclaim of this ticket was under way; nothing was sent", err)
	}
	if err := t.heldForProclaim(); err != nil {
		t.proclaims.unlock()
		return err
	}
	stop, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	t.c.wg.Add(1)
	go func() {
		defer t.c.wg.Done()
		defer t.proclaims.unlock()
		defer cancel()
		go func() { // a released ticket's V would be answered N: stop retrying it
			select {
			case <-t.releasedCh:
				cancel()
			case <-stop.Done():
			}
		}()
		leaseEnd, _ := t.bounds()
		a, _, err := t.c.tokenCallValue(stop, opValue, t.key, t.token, 0, value, leaseEnd)
		done <- proclaimOutcome(t.key, t.token, a, err)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return newError(ErrIndeterminate, op, t.key, "the context ended; the proclaim goes on until answered or the lease would have ended", ctx.Err())
	}
}

// heldForProclaim is ErrNotHeld for a released ticket or one whose lease has certainly ended.
func (t *Ticket) heldForProclaim() error {
	leaseEnd, released := t.bounds()
	if released {
		return newError(ErrNotHeld, "proclaim", t.key, "the ticket was released", nil)
	}
	if !t.c.now().Before(leaseEnd) {
		return newError(ErrNotHeld, "proclaim", t.key, "the lease has ended", nil)
	}
	return nil
}

func proclaimOutcome(key string, token uint64, a answer, err error) error {
	var e *Error
	switch {
	case err != nil && errors.Is(err, ErrClosed):
		return newError(ErrClosed, "proclaim", key, "", nil)
	case err != nil && errors.As(err, &e):
		return err // refused by the session before sending (ErrUnavailable)
	case err != nil && errors.Is(err, context.Canceled):
		return newError(ErrNotHeld, "proclaim", key, "the ticket was released while the proclaim was under way", err)
	case err != nil:
		return newError(ErrIndeterminate, "proclaim", key, fmt.Sprintf("token %d: no answer before the lease would have ended", token), err)
	case a.op == opNotHeld:
		return newError(ErrNotHeld, "proclaim", key, fmt.Sprintf("token %d", token), nil)
	}
	return nil
}

// fifoTurn lets one holder at a time through, in the order they asked (sync.Mutex promises no
// order): the turn of a ticket's Proclaims (9.16.3).
type fifoTurn struct {
	mu      sync.Mutex
	busy    bool
	waiters []chan struct{}
}

// lock waits for the turn; an error (ctx's) means it was not taken.
func (f *fifoTurn) lock(ctx context.Context) error {
	f.mu.Lock()
	if !f.busy {
		f.busy = true
		f.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	f.waiters = append(f.waiters, ch)
	f.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		f.mu.Lock()
		for i, w := range f.waiters {
			if w == ch {
				f.waiters = append(f.waiters[:i], f.waiters[i+1:]...)
				f.mu.Unlock()
				return ctx.Err()
			}
		}
		f.mu.Unlock()
		f.unlock() // handed the turn meanwhile: pass it on
		return ctx.Err()
	}
}

// unlock hands the turn to the longest waiter, or frees it.
func (f *fifoTurn) unlock() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.waiters) == 0 {
		f.busy = false
		return
	}
	close(f.waiters[0])
	f.waiters = f.waiters[1:]
}

package leasehold

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The life of an Acquire after it was routed: its deadline D (9.8), a context that ends (9.14),
// its answer and the Ticket gate (9.7).

func (c *Client) awaitAcquire(ctx context.Context, r *request) (*Ticket, error) {
	atD := time.NewTimer(r.deadline.Sub(c.now()))
	defer atD.Stop()
	var grace <-chan time.Time
	done := ctx.Done()
	for {
		select {
		case res := <-r.done:
			return res.ticket, res.err
		case <-atD.C:
			grace = c.atDeadline(r)
		case <-grace:
			c.afterGrace(r)
		case <-done:
			done = nil
			c.cancelled(r, ctx.Err())
		}
	}
}

// cancelled is PROTOCOL.md 9.14 for a context that ended. A cancelled context ends the call at
// once with what is true then (9.14.4: Unavailable if nothing was written, else Indeterminate,
// its cause ctx.Err()); a cancel (not a deadline: that moved D already) before D of an Acquire
// written (or being written) on a 1.4 session also sends W owner key on that session, so no orphaned waiter
// stays queued. What the server then answers goes on without the caller: T needs nothing, an
// A that came first is released by its exact token (the call has concluded, 9.7), and with no
// answer within ResponseGrace of the W the session is closed so the server drops the waiter.
// A partly written acquire gets its W too, behind its bytes on the same session: closing the
// session instead could leave a grant decided before the server saw the close with nobody to
// release it, holding the key until its lease ends.
func (c *Client) cancelled(r *request, cause error) {
	r.mu.Lock()
	if r.concluded {
		r.mu.Unlock()
		return
	}
	s := r.sess
	if !errors.Is(cause, context.Canceled) || r.state == stateQueued || !c.now().Before(r.deadline) || !s.is14() {
		r.mu.Unlock()
		c.abandon(r, cause)
		return
	}
	owner := r.owner
	r.concludeLocked(result{err: newError(ErrIndeterminate, r.name(), r.key,
		"the context was cancelled while it waited in the server's queue; withdrawn (a grant that came first is released by its token)", cause)})
	r.mu.Unlock()
	if s.withdraw(r) { // false: the session is dead, and the server dropped the waiter with it
		time.AfterFunc(c.opts.ResponseGrace, func() {
			if s.unanswered(owner) {
				s.close(fmt.Errorf("a withdrawn acquire had no answer within the response grace"))
			}
		})
	}
}

// atDeadline is 9.8 at D: queued → Unavailable; partly written → close its exact session,
// Indeterminate; written → wait for the answer until D + ResponseGrace.
func (c *Client) atDeadline(r *request) <-chan time.Time {
	r.mu.Lock()
	if r.concluded {
		r.mu.Unlock()
		return nil
	}
	switch r.state {
	case stateQueued:
		r.concludeLocked(result{err: newError(ErrUnavailable, r.name(), r.key, "no session could send it before its deadline", c.lastConnectError())})
		r.mu.Unlock()
		return nil
	case stateWriting:
		s := r.sess
		r.concludeLocked(result{err: newError(ErrIndeterminate, r.name(), r.key, "its write had begun but not finished at its deadline; that session was closed", nil)})
		r.mu.Unlock()
		s.close(fmt.Errorf("an acquire was partly written at its deadline"))
		return nil
	default:
		r.mu.Unlock()
		return time.After(r.deadline.Add(c.opts.ResponseGrace).Sub(c.now()))
	}
}

func (c *Client) afterGrace(r *request) {
	r.mu.Lock()
	if r.concluded {
		r.mu.Unlock()
		return
	}
	if r.state == stateQueued { // sent again after an X 8 and not yet written
		r.concludeLocked(result{err: newError(ErrUnavailable, r.name(), r.key, "no session could send it before its deadline", nil)})
		r.mu.Unlock()
		return
	}
	s := r.sess
	r.concludeLocked(result{err: newError(ErrIndeterminate, r.name(), r.key, "no answer by its deadline plus the response grace; that session was closed", nil)})
	r.mu.Unlock()
	s.close(fmt.Errorf("an acquire had no answer by its deadline plus the response grace"))
}

// abandon concludes a call whose context ended: Unavailable if nothing was sent, else
// Indeterminate. A sent request stays registered: a late grant is released by its token, and
// at D + ResponseGrace without an answer its session is closed so the server drops the waiter.
func (c *Client) abandon(r *request, cause error) {
	r.mu.Lock()
	if r.concluded {
		r.mu.Unlock()
		return
	}
	if r.state == stateQueued {
		r.concludeLocked(result{err: newError(ErrUnavailable, r.name(), r.key, "the context ended before it was sent", cause)})
		r.mu.Unlock()
		return
	}
	s, owner := r.sess, r.owner
	r.concludeLocked(result{err: newError(ErrIndeterminate, r.name(), r.key, "the context ended after it was possibly sent", cause)})
	r.mu.Unlock()
	time.AfterFunc(r.deadline.Add(c.opts.ResponseGrace).Sub(c.now()), func() {
		if s.unanswered(owner) {
			s.close(fmt.Errorf("an abandoned acquire had no answer by its deadline plus the response grace"))
		}
	})
}

// acquireAnswered settles an Acquire's answer. A grant passes the Ticket gate (9.7) only if
// now < min(D, validUntil) and the call is still waiting; otherwise its exact token is
// released (retried until the lease would have ended anyway) and the outcome is Indeterminate.
func (c *Client) acquireAnswered(r *request, a answer) {
	now := c.now()
	c.mu.Lock()
	c.x8streak = 0
	c.mu.Unlock()
	r.mu.Lock()
	switch a.op {
	case opTimeout:
		r.concludeLocked(result{err: newError(ErrTimedOut, r.name(), r.key, "", nil)})
	case opBusy:
		r.concludeLocked(result{err: newError(ErrBusy, r.name(), r.key, "", nil)})
	case opMismatch:
		mismatch := &LimitMismatchError{Requested: int(r.limit), KeyLimit: int(a.limit)}
		r.concludeLocked(result{err: newError(ErrLimitMismatch, r.name(), r.key, "", mismatch)})
	case opAcquire:
		lease := time.Duration(r.lease) * time.Second
		queued := time.Duration(a.queuedMs) * time.Millisecond
		validUntil := r.sendStart.Add(queued + lease - c.opts.margin(queued+lease))
		leaseEnd := now.Add(lease + c.opts.margin(lease)) // no later than this, the server's lease has ended
		gate := r.deadline
		if validUntil.Before(gate) {
			gate = validUntil
		}
		if r.concluded || !now.Before(gate) {
			r.concludeLocked(result{err: newError(ErrIndeterminate, r.name(), r.key,
				fmt.Sprintf("granted (token %d) only after its deadline or its safe validity; released by that token", a.token), nil)})
			r.mu.Unlock()
			c.compensate(r.key, a.token, leaseEnd)
			return
		}
		t := newTicket(c, r.key, a.token, validUntil, leaseEnd)
		t.shared = r.shared
		r.concludeLocked(result{ticket: t})
	}
	r.mu.Unlock()
}

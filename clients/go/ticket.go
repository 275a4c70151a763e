package leasehold

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Ticket is a delivered grant: its key, its fencing token and its local validity (PROTOCOL.md
// 9.6). Stop acting as holder at ValidUntil, and pass Token to the guarded resource with every
// write: the resource alone can refuse a holder that was paused past its lease.
type Ticket struct {
	c     *Client
	key   string
	token uint64
	// shared: a shared grant (AcquireShared), which has no value (Proclaim refuses it)
	shared bool
	// proclaims: one V of this ticket in flight at a time, in call order (9.16.3)
	proclaims fifoTurn

	mu         sync.Mutex
	validUntil time.Time // safe end of the lease on this client's monotonic clock
	leaseEnd   time.Time // no later than this the server's lease has certainly ended
	released   bool
	releasedCh chan struct{}
}

func newTicket(c *Client, key string, token uint64, validUntil, leaseEnd time.Time) *Ticket {
	return &Ticket{c: c, key: key, token: token, validUntil: validUntil, leaseEnd: leaseEnd, releasedCh: make(chan struct{})}
}

// Key is the locked key.
func (t *Ticket) Key() string { return t.key }

// Token is the grant's fencing token: strictly greater than every token issued before.
func (t *Ticket) Token() uint64 { return t.token }

// ValidUntil is when the caller must stop acting as holder (a monotonic time of this process;
// compare with time.Now(), or use Valid or Remaining). Extend moves it on.
func (t *Ticket) ValidUntil() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.validUntil
}

// Valid reports whether the lease's safe validity has not ended and the ticket is not released.
func (t *Ticket) Valid() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.released && t.c.now().Before(t.validUntil)
}

// Remaining is the time left until ValidUntil (negative once passed).
func (t *Ticket) Remaining() time.Duration { return t.ValidUntil().Sub(t.c.now()) }

func (t *Ticket) bounds() (leaseEnd time.Time, released bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.leaseEnd, t.released
}

// Release releases the grant, retried on any session until the lease would have ended anyway
// (9.10). It returns nil when released, or an error matching ErrNotHeld (the token was no
// longer the key's grant: the lease had ended, or a lost earlier attempt had released it) or
// ErrExpired (no answer before the lease would have ended). If ctx ends first it returns an
// error matching ErrIndeterminate and the Release keeps being retried in the background.
// The ticket stops being valid at once.
func (t *Ticket) Release(ctx context.Context) error {
	t.mu.Lock()
	if !t.released {
		t.released = true
		close(t.releasedCh)
	}
	leaseEnd := t.leaseEnd
	t.mu.Unlock()
	done := make(chan error, 1)
	t.c.wg.Add(1)
	go func() {
		defer t.c.wg.Done()
		a, _, err := t.c.tokenCall(context.Background(), opRelease, t.key, t.token, 0, leaseEnd)
		done <- tokenOutcome("release", t.key, t.token, a, err)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return newError(ErrIndeterminate, "release", t.key, "the context ended; the release goes on in the background", ctx.Err())
	}
}

// Extend asks for lease more (the server's lease ends at the later of its current end and
// now + lease) and moves ValidUntil on. It returns nil when extended, or an error matching
// ErrNotHeld, ErrExpired (no answer before the lease would have ended, or before ctx's
// deadline) or ErrInvalidArgument.
func (t *Ticket) Extend(ctx context.Context, lease time.Duration) error {
	secs, err := wholeSeconds(lease, 1, "lease")
	if err != nil {
		return newError(ErrInvalidArgument, "extend", t.key, err.Error(), nil)
	}
	leaseEnd, released := t.bounds()
	if released {
		return newError(ErrNotHeld, "extend", t.key, "the ticket was released", nil)
	}
	giveUp := leaseEnd
	if d, ok := ctx.Deadline(); ok && d.Before(giveUp) {
		giveUp = d
	}
	a, sent, err := t.c.tokenCall(ctx, opExtend, t.key, t.token, secs, giveUp)
	if err != nil || a.op != opExtend {
		return tokenOutcome("extend", t.key, t.token, a, err)
	}
	now := t.c.now()
	t.mu.Lock()
	if v := sent.Add(lease - t.c.opts.margin(lease)); v.After(t.validUntil) {
		t.validUntil = v
	}
	if e := now.Add(lease + t.c.opts.margin(lease)); e.After(t.leaseEnd) {
		t.leaseEnd = e
	}
	t.mu.Unlock()
	return nil
}

// Check asks the server whether this ticket's token is still the key's active grant (section
// 11). It answers false without a request once the ticket was released or its lease has
// certainly ended, and gives up (ErrIndeterminate) at the earlier of the lease's end, the
// transport deadline and ctx's deadline.
func (t *Ticket) Check(ctx context.Context) (bool, error) {
	leaseEnd, released := t.bounds()
	now := t.c.now()
	if released || !now.Before(leaseEnd) {
		return false, nil
	}
	giveUp := t.c.callDeadline(ctx)
	if leaseEnd.Before(giveUp) {
		giveUp = leaseEnd
	}
	return t.c.check(ctx, t.key, t.token, giveUp)
}

// KeepAlive extends the ticket by lease every lease/3 until Stop, Release, or the lease is
// lost. Lost() is closed once, when the lease is lost; Err then says why: ErrNotHeld (an
// Extend was answered not held), ErrExpired (the ticket's validity ended without a successful
// Extend: the server was unreachable or slow, or this process was paused) or ErrClosed.
// Context() is cancelled at the same moment (or by Stop), for work that must end with the lock.
func (t *Ticket) KeepAlive(parent context.Context, lease time.Duration) (*KeepAlive, error) {
	if _, err := wholeSeconds(lease, 1, "lease"); err != nil {
		return nil, newError(ErrInvalidArgument, "extend", t.key, err.Error(), nil)
	}
	ctx, cancel := context.WithCancel(parent)
	k := &KeepAlive{t: t, lease: lease, ctx: ctx, cancel: cancel, lost: make(chan struct{}), stop: make(chan struct{})}
	t.c.wg.Add(1)
	go k.run()
	return k, nil
}

// KeepAlive is a running keep-alive; see Ticket.KeepAlive.
type KeepAlive struct {
	t      *Ticket
	lease  time.Duration
	ctx    context.Context
	cancel context.CancelFunc

	once     sync.Once
	stopOnce sync.Once
	lost     chan struct{}
	stop     chan struct{}
	mu       sync.Mutex
	err      error // guarded by mu: set once, before the context is cancelled and Lost is closed
}

// Lost is closed when the lease is lost.
func (k *KeepAlive) Lost() <-chan struct{} { return k.lost }

// Err is why the lease was lost (nil while it is not).
func (k *KeepAlive) Err() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.err
}

// Context is cancelled when the lease is lost, the keep-alive stops or the ticket is released.
func (k *KeepAlive) Context() context.Context { return k.ctx }

// Stop ends the Extends without releasing.
func (k *KeepAlive) Stop() {
	k.stopOnce.Do(func() { close(k.stop) })
	k.cancel()
}

func (k *KeepAlive) lose(err error) {
	k.once.Do(func() {
		k.mu.Lock()
		k.err = err
		k.mu.Unlock()
		// In this order: whoever wakes on Context().Done() already reads Err, and whoever wakes
		// on Lost already finds the context cancelled.
		k.cancel()
		close(k.lost)
	})
}

func (k *KeepAlive) run() {
	defer k.t.c.wg.Done()
	defer k.cancel()
	period := k.lease / 3
	tick := time.NewTimer(period)
	defer tick.Stop()
	for {
		validity := time.NewTimer(k.t.Remaining())
		select {
		case <-tick.C:
			validity.Stop()
			ctx, cancel := context.WithDeadline(context.Background(), k.t.ValidUntil())
			err := k.t.Extend(ctx, k.lease)
			cancel()
			switch {
			case err == nil:
			case errors.Is(err, ErrClosed):
				k.lose(err)
				return
			case errors.Is(err, ErrNotHeld):
				if _, released := k.t.bounds(); released {
					return
				}
				k.lose(err)
				return
			case !k.t.Valid():
				k.lose(newError(ErrExpired, "extend", k.t.key, "the ticket's validity ended without a successful extend", err))
				return
			}
			tick.Reset(period)
		case <-validity.C:
			k.lose(newError(ErrExpired, "extend", k.t.key, "the ticket's validity ended without a successful extend", nil))
			return
		case <-k.stop:
			validity.Stop()
			return
		case <-k.ctx.Done(): // the parent context ended: stop extending, as Stop does
			validity.Stop()
			return
		case <-k.t.releasedCh:
			validity.Stop()
			return
		case <-k.t.c.closedCh:
			validity.Stop()
			k.lose(newError(ErrClosed, "extend", k.t.key, "", nil))
			return
		}
	}
}

package leasehold

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// State is a key's state in an Event (PROTOCOL.md 16.2).
type State int

// The states of an Event.
const (
	// StateUnknown: the client does not know the key's state now (its subscription ended: a
	// leader change, a broken session, Busy, a server that does not speak 1.4); it subscribes
	// again and the next event ends it. Err says why.
	StateUnknown       State = iota
	StateFree                // nobody holds the key
	StateHeld                // held exclusive: Token is the holder's, Value its value
	StateLockDelay           // an exclusive grant expired into its lock-delay (section 12): Token is the expired grant's
	StateShared              // held shared: Count slots in use (delayed ones included) of Limit (0 = read lock)
	StateRecoveryGrace       // a single node's recovery grace after a restart (section 8): a holder may still act
)

var stateNames = [...]string{"unknown", "free", "held", "lock-delay", "shared", "recovery-grace"}

func (s State) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return fmt.Sprintf("State(%d)", int(s))
	}
	return stateNames[s]
}

// Cause is what decided an event's state (PROTOCOL.md 16.2).
type Cause int

// The causes of an Event. A decision that grants is CauseGrant, whatever freed the key.
const (
	CauseCurrent  Cause = 0 // the key's state when the subscription began (and every Unknown event)
	CauseGrant    Cause = 1
	CauseRelease  Cause = 2
	CauseExpiry   Cause = 3 // a lease ran out
	CauseDelayEnd Cause = 4 // a lock-delay ended
	CauseValueSet Cause = 5 // the holder proclaimed a new value
	CauseGraceEnd Cause = 6 // the recovery grace ended
)

// Event is one state of an observed key (PROTOCOL.md 16.2). An event says who held the key when
// the change was decided, not for how long: nobody acts as holder because of an event; only a
// Ticket entitles its holder, and its token fences (9.15.6).
type Event struct {
	Key   string
	State State
	// Token: Held the holder's; LockDelay the expired grant's; Free, Shared and RecoveryGrace
	// the highest token known on the key (0 when none is). Never lower than an earlier event's
	// of the same Observation (9.15.4). 0 for Unknown.
	Token uint64
	Value []byte // Held only: the grant's value (nil when it has none)
	Count int    // Held 1; Shared the slots in use; else 0
	Limit int    // Shared the key's limit (0 = read lock); else 0
	Cause Cause
	// Coalesced: at least one change since the previous event is not reported (the server's
	// output or this Observation's reader fell behind: 16.4, 9.15.2).
	Coalesced bool
	Err       error // Unknown only: why the state is not known
}

// Observation follows one key (Client.Observe). Read its events from Events until that channel
// is closed; Close (or the context given to Observe) ends it.
type Observation struct {
	c      *Client
	key    string
	events chan Event
	stop   chan struct{} // closed when the observation ends
	lost   chan endReason

	mu          sync.Mutex
	closed      bool
	err         error
	cur         *request // the current subscription (its O); nil between subscriptions
	curEvents   bool     // cur delivered an event (the resubscribe back-off starts over)
	highest     uint64   // the highest token delivered (9.15.4)
	toldUnknown bool     // an Unknown was delivered and no event since (9.15.3: once)
}

// endKind is why a subscription ended.
type endKind int

const (
	endBroken    endKind = iota // X 9, a broken session, a session that did not come up
	endRedirect                 // X 8: nothing executed; the client follows the named leader
	endBusy                     // B: nothing subscribed
	endLegacy                   // the session speaks 1.3: no O may be sent (9.13)
	endForbidden                // an X 7 named the key
)

type endReason struct {
	kind      endKind
	cause     error
	hadEvents bool
}

// Observe follows key (PROTOCOL.md section 16, client rule 9.15): the key's state now, then
// every change, in order, from committed state only. It subscribes (O) on a revision 1.4
// session to the cluster's leader and keeps subscribing, for as long as the Observation is open.
//
// Events holds at most one undelivered event: a newer one replaces it, marked Coalesced, so a
// slow reader may miss intermediate states, never the latest. When a subscription ends (a
// leader change, a broken session, Busy, a failed subscription) an Unknown event is delivered
// once and the client subscribes again, 50 ms doubling to 500 ms between attempts over the
// servers; its first event ends the Unknown. While the server speaks only 1.3 the observation
// stays Unknown and is tried again every 500 ms. Tokens never go back across subscriptions.
//
// The observation ends when ctx ends, Close is called, the client is closed, or the server
// forbids the key (an X 7 naming it): Events is then closed, a U goes to the server, and Err
// says why. With ProtocolRevision "1.3" Observe fails at once (ErrUnavailable); an invalid key
// is ErrInvalidArgument.
func (c *Client) Observe(ctx context.Context, key string) (*Observation, error) {
	if msg := validKey(key); msg != "" {
		return nil, newError(ErrInvalidArgument, "observe", key, msg, nil)
	}
	if c.opts.ProtocolRevision == Revision13 {
		return nil, newError(ErrUnavailable, "observe", key, "observing needs revision 1.4 and ProtocolRevision is 1.3", nil)
	}
	c.mu.Lock()
	closed := c.closed
	if !closed {
		c.wg.Add(1)
	}
	c.mu.Unlock()
	if closed {
		return nil, newError(ErrClosed, "observe", key, "", nil)
	}
	o := &Observation{c: c, key: key, events: make(chan Event, 1), stop: make(chan struct{}), lost: make(chan endReason, 1)}
	go o.run(ctx)
	return o, nil
}

// Events delivers the observation's events in order; it is closed when the observation ends.
func (o *Observation) Events() <-chan Event { return o.events }

// Key is the observed key.
func (o *Observation) Key() string { return o.key }

// Err says why Events was closed: nil after Close, the context's error, an error matching
// ErrClosed (the client was closed) or ErrForbidden (the server refused the key). nil while open.
func (o *Observation) Err() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

// Close ends the observation: it sends U for the current subscription if its session is open
// and closes Events. No event is delivered after Close has returned.
func (o *Observation) Close() error {
	o.finish(nil)
	return nil
}

func (o *Observation) run(ctx context.Context) {
	defer o.c.wg.Done()
	backoff := 50 * time.Millisecond
	for {
		r := o.subscribe()
		if r == nil {
			return
		}
		o.c.route(r)
		var why endReason
		select {
		case why = <-o.lost:
		case <-ctx.Done():
			o.finish(ctx.Err())
			return
		case <-o.stop:
			return
		case <-o.c.closedCh:
			o.finish(newError(ErrClosed, "observe", o.key, "", nil))
			return
		}
		var delay time.Duration
		switch why.kind {
		case endForbidden:
			o.finish(newError(ErrForbidden, "observe", o.key, "the server does not let this client use the key", why.cause))
			return
		case endRedirect: // the session's slot already waits as 9.12 says before the leader's session
		case endLegacy:
			delay = 500 * time.Millisecond
		default:
			if why.hadEvents {
				backoff = 50 * time.Millisecond
			}
			delay = backoff
			if backoff *= 2; backoff > 500*time.Millisecond {
				backoff = 500 * time.Millisecond
			}
		}
		wait := time.NewTimer(delay)
		select {
		case <-wait.C:
		case <-ctx.Done():
			wait.Stop()
			o.finish(ctx.Err())
			return
		case <-o.stop:
			wait.Stop()
			return
		case <-o.c.closedCh:
			wait.Stop()
			o.finish(newError(ErrClosed, "observe", o.key, "", nil))
			return
		}
	}
}

// subscribe makes the next subscription's O (a new watch id, from the owners' counter so that a
// B names exactly one request, 9.15.1); nil once the observation has ended.
func (o *Observation) subscribe() *request {
	r := newRequest(opObserve, o.key, time.Time{})
	r.owner = o.c.nextID()
	r.obs = o
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil
	}
	o.cur, o.curEvents = r, false
	return r
}

// ended is told that subscription r ended: an Unknown (once) unless the client only follows an
// X 8 to the leader, then the run loop subscribes again.
func (o *Observation) ended(r *request, kind endKind, cause error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed || o.cur != r {
		return
	}
	o.cur = nil
	if kind != endRedirect && !o.toldUnknown {
		o.toldUnknown = true
		o.pushLocked(Event{Key: o.key, State: StateUnknown, Err: cause})
	}
	o.lost <- endReason{kind: kind, cause: cause, hadEvents: o.curEvents}
}

// event delivers an event of subscription r (9.15.2, 9.15.4).
func (o *Observation) event(r *request, a answer) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed || o.cur != r {
		return
	}
	ev := Event{Key: o.key, Token: a.token, Count: int(a.count), Limit: int(a.limit), Cause: Cause(a.cause), Coalesced: a.flags&1 != 0}
	switch a.state {
	case 'H', 'D':
		if a.token < o.highest {
			return // stale (committed state cannot produce it; a guard, 9.15.4)
		}
		ev.State = StateHeld
		if a.state == 'D' {
			ev.State = StateLockDelay
		} else if len(a.value) > 0 {
			ev.Value = a.value
		}
	case 'F', 'S', 'G':
		if ev.Token < o.highest { // "the highest known": a new leader may know less
			ev.Token = o.highest
		}
		ev.State = map[byte]State{'F': StateFree, 'S': StateShared, 'G': StateRecoveryGrace}[a.state]
	default:
		ev.Err = fmt.Errorf("%w: event state 0x%02X", errProtocol, a.state)
	}
	if ev.Token > o.highest {
		o.highest = ev.Token
	}
	o.curEvents, o.toldUnknown = true, ev.State == StateUnknown
	o.pushLocked(ev)
}

// pushLocked puts ev in Events without blocking: an undelivered event is replaced by ev, marked
// coalesced (9.15.2). o.mu is held, and this is the channel's only sender.
func (o *Observation) pushLocked(ev Event) {
	for {
		select {
		case o.events <- ev:
			return
		default:
		}
		select {
		case <-o.events:
			ev.Coalesced = true
		default: // the reader took it meanwhile
		}
	}
}

// finish ends the observation once: Events closed, the current subscription unobserved.
func (o *Observation) finish(err error) {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return
	}
	o.closed, o.err = true, err
	r := o.cur
	o.cur = nil
	select { // an event not yet read is not delivered after Close (9.15.5)
	case <-o.events:
	default:
	}
	close(o.events)
	close(o.stop)
	o.mu.Unlock()
	if r == nil {
		return
	}
	r.mu.Lock()
	s, sent := r.sess, r.state != stateQueued
	r.concludeLocked(result{}) // a subscription still queued is not sent
	r.mu.Unlock()
	if s != nil && sent {
		s.unwatch(r)
	}
}

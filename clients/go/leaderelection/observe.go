package leaderelection

import (
	"context"
	"fmt"
	"sync"

	"leasehold.dev/leasehold"
)

// EventKind is what a LeaderEvent says.
type EventKind int

// The kinds of LeaderEvent.
const (
	// NewLeader: a new term began; Term and Identity are its. Once per term.
	NewLeader EventKind = iota + 1
	// Proclaimed: the current leader set another value (Ticket.Proclaim); Identity is it.
	Proclaimed
	// NoLeader: nobody leads (released or expired, nobody queued; or a lock-delay).
	NoLeader
	// LeaderUnknown: the observation cannot know now (a broken session, a leader change of the
	// cluster, a server's recovery grace); Err says why. A later event ends it.
	LeaderUnknown
)

var kindNames = [...]string{"", "new-leader", "proclaimed", "no-leader", "leader-unknown"}

func (k EventKind) String() string {
	if k <= 0 || int(k) >= len(kindNames) {
		return fmt.Sprintf("EventKind(%d)", int(k))
	}
	return kindNames[k]
}

// LeaderEvent is a change of an election's leader, as the server pushed it. It says who led
// when the change was decided: it is for routing and display, never a grant.
type LeaderEvent struct {
	Kind     EventKind
	Term     uint64 // NewLeader, Proclaimed: the leader's term (its grant's fencing token)
	Identity string // NewLeader, Proclaimed: the leader's identity (the grant's value)
	// Coalesced: the reader fell behind and at least one earlier event was replaced by this one.
	Coalesced bool
	Err       error // LeaderUnknown: why
}

// tracker turns an observation's key events into leader events: Held with a higher token is a
// new term (once per term), Held with the same token and another value a proclaim, Free,
// LockDelay and Shared (a misuse of the key) no leader, RecoveryGrace and Unknown unknown.
// It keeps the last leader seen.
type tracker struct {
	mu       sync.Mutex
	lastTerm uint64
	leading  bool // a leader is known: term and identity
	term     uint64
	identity string
	gap      bool // the last event told was Unknown (or none yet): the next one ends it with an event
}

func newTracker() *tracker { return &tracker{gap: true} }

// decide returns the leader event ev makes, if any.
func (tr *tracker) decide(ev leasehold.Event) (LeaderEvent, bool) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	endsGap := tr.gap
	tr.gap = false
	switch ev.State {
	case leasehold.StateHeld:
		if ev.Token < tr.lastTerm {
			return LeaderEvent{}, false // stale (the observation drops these already: a guard)
		}
		identity := string(ev.Value)
		changed := !tr.leading || tr.term != ev.Token || tr.identity != identity
		tr.leading, tr.term, tr.identity = true, ev.Token, identity
		if ev.Token > tr.lastTerm {
			tr.lastTerm = ev.Token
			return LeaderEvent{Kind: NewLeader, Term: ev.Token, Identity: identity}, true
		}
		return LeaderEvent{Kind: Proclaimed, Term: ev.Token, Identity: identity}, changed
	case leasehold.StateUnknown:
		return tr.unknownLocked(ev.Err), true
	case leasehold.StateRecoveryGrace:
		return tr.unknownLocked(fmt.Errorf("the server is in its recovery grace")), true
	default:
		had := tr.leading || endsGap
		if ev.Token > tr.lastTerm {
			tr.lastTerm = ev.Token
		}
		tr.leading = false
		return LeaderEvent{Kind: NoLeader}, had
	}
}

func (tr *tracker) unknownLocked(err error) LeaderEvent {
	tr.leading, tr.gap = false, true
	return LeaderEvent{Kind: LeaderUnknown, Err: err}
}

// leader is the last leader seen, if one leads as far as the last event says.
func (tr *tracker) leader() (term uint64, identity string, ok bool) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.term, tr.identity, tr.leading
}

// follow reads obs until it ends, calling onEvent for each leader event, in order. An
// observation that ends for another reason than ctx or Close (the client closed, the key
// forbidden) is told as a last LeaderUnknown.
func (tr *tracker) follow(ctx context.Context, obs *leasehold.Observation, onEvent func(LeaderEvent)) {
	for ev := range obs.Events() {
		if le, ok := tr.decide(ev); ok {
			le.Coalesced = ev.Coalesced
			onEvent(le)
		}
	}
	if err := obs.Err(); err != nil && ctx.Err() == nil {
		tr.mu.Lock()
		le := tr.unknownLocked(fmt.Errorf("the observation ended: %w", err))
		tr.mu.Unlock()
		onEvent(le)
	}
}

// Observe follows the leader of the election on key, for a process that does not campaign:
// the current leader (or NoLeader), then every change, pushed by the server, until ctx ends
// (then the channel is closed; also when the client is closed, after a last LeaderUnknown).
// The channel holds at most one undelivered event: a newer one replaces it, marked Coalesced,
// so a slow reader may miss a term, never the latest state. It fails at once with the
// client's errors of Client.Observe (a ProtocolRevision of "1.3", an invalid key, a closed client).
func Observe(ctx context.Context, client *leasehold.Client, key string) (<-chan LeaderEvent, error) {
	obs, err := client.Observe(ctx, key)
	if err != nil {
		return nil, err
	}
	out := make(chan LeaderEvent, 1)
	go func() {
		defer close(out)
		newTracker().follow(ctx, obs, func(le LeaderEvent) { push(out, le) })
	}()
	return out, nil
}

// push puts le in out without blocking; an undelivered event is replaced, and le is then
// marked Coalesced. The caller is out's only sender.
func push(out chan LeaderEvent, le LeaderEvent) {
	for {
		select {
		case out <- le:
			return
		default:
		}
		select {
		case <-out:
			le.Coalesced = true
		default: // the reader took it meanwhile
		}
	}
}

package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"time"

	"leasehold.dev/leasehold"
)

// releaseWait bounds how long the end of a term waits for its release's answer before it
// campaigns again or Run returns; the release itself goes on in the background until the lease
// would have ended anyway.
const releaseWait = 5 * time.Second

// LeaderElector is one candidate of an election. Run campaigns; IsLeader, GetLeader and Resign
// may be called from any goroutine.
type LeaderElector struct {
	cfg      Config
	identity []byte
	tracker  *tracker
	running  atomic.Bool
	rng      *rand.Rand // Run's goroutine only

	mu       sync.Mutex
	current  *term // the term this candidate leads now; nil when it does not
	lastTerm uint64
}

// term is one term of this candidate, from its grant to its end on this side.
type term struct {
	ticket *leasehold.Ticket
	safety time.Duration
	resign chan struct{}
	once   sync.Once
	mu     sync.Mutex
	ended  bool
}

// end reports the term's end on this side: IsLeader is false from now on.
func (t *term) end() {
	t.mu.Lock()
	t.ended = true
	t.mu.Unlock()
}

// until is when the term ends on this side unless an Extend moves it on.
func (t *term) until() time.Time { return t.ticket.ValidUntil().Add(-t.safety) }

func (t *term) valid() bool {
	t.mu.Lock()
	ended := t.ended
	t.mu.Unlock()
	return !ended && t.ticket.Valid() && time.Now().Before(t.until())
}

// NewLeaderElector checks cfg and returns a candidate; nothing is sent before Run.
func NewLeaderElector(cfg Config) (*LeaderElector, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &LeaderElector{cfg: cfg, identity: []byte(cfg.Identity), tracker: newTracker(),
		rng: rand.New(rand.NewSource(time.Now().UnixNano()))}, nil
}

// RunOrDie is NewLeaderElector and Run; it panics on an invalid config and when Run ends for
// another reason than ctx.
func RunOrDie(ctx context.Context, cfg Config) {
	le, err := NewLeaderElector(cfg)
	if err != nil {
		panic(err)
	}
	if err := le.Run(ctx); err != nil && ctx.Err() == nil {
		panic(err)
	}
}

// IsLeader reports whether this candidate leads now: a term started and has not ended on this
// side (its validity minus the safety has not passed, its keep-alive is not lost).
func (le *LeaderElector) IsLeader() bool {
	le.mu.Lock()
	t := le.current
	le.mu.Unlock()
	return t != nil && t.valid()
}

// GetLeader is the identity of the last leader the elector's observation saw while Run runs:
// "" when nobody leads or it is not known. For routing and display, never a grant.
func (le *LeaderElector) GetLeader() string {
	_, identity, ok := le.tracker.leader()
	if !ok {
		return ""
	}
	return identity
}

// Resign ends the current term as its other ends do (OnStartedLeading's context cancelled,
// OnStoppedLeading, the release: the next candidate leads one round trip later), and this
// candidate queues again at the tail. It returns false when it does not lead. Never blocks.
func (le *LeaderElector) Resign() bool {
	le.mu.Lock()
	t := le.current
	le.mu.Unlock()
	if t == nil {
		return false
	}
	t.once.Do(func() { close(t.resign) })
	return true
}

// Run campaigns until ctx ends, leading whenever it is granted: unlike client-go it does not
// return when a term ends, it queues again. It observes the key too (OnNewLeader, GetLeader).
// When ctx ends while queued the acquire is withdrawn; while leading the term ends and its
// grant is released (unless KeepLeaseOnCancel). It returns ctx's error, or at once an error of
// the client that no retry can mend: ErrClosed, ErrForbidden, ErrInvalidArgument, an
// observation it cannot open (a ProtocolRevision of "1.3"). Busy, Unavailable and
// Indeterminate attempts are retried after a jittered back-off of 100 ms doubling to 5 s.
// One Run at a time per elector.
func (le *LeaderElector) Run(ctx context.Context) error {
	if !le.running.CompareAndSwap(false, true) {
		return fmt.Errorf("leaderelection: Run is already running for %q", le.cfg.Identity)
	}
	defer le.running.Store(false)
	obsCtx, stopObs := context.WithCancel(ctx)
	obs, err := le.cfg.Client.Observe(obsCtx, le.cfg.Key)
	if err != nil {
		stopObs()
		return err
	}
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		le.tracker.follow(obsCtx, obs, le.onEvent)
	}()
	defer func() { stopObs(); obs.Close(); <-followed }()
	return le.campaign(ctx)
}

func (le *LeaderElector) onEvent(ev LeaderEvent) {
	if ev.Kind == NewLeader && le.cfg.Callbacks.OnNewLeader != nil {
		le.cfg.Callbacks.OnNewLeader(ev.Identity)
	}
}

// campaign queues acquires until ctx ends, leading each grant's term.
func (le *LeaderElector) campaign(ctx context.Context) error {
	var backoff time.Duration
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		ticket, err := le.cfg.Client.Acquire(ctx, le.cfg.Key, le.cfg.CampaignWait, le.cfg.LeaseDuration,
			leasehold.WithValue(le.identity))
		switch {
		case err == nil && ctx.Err() != nil: // granted as Run ended: nobody was told, hand it on
			le.release(ticket)
			return ctx.Err()
		case err == nil:
			backoff = 0
			le.lead(ctx, ticket)
		case ctx.Err() != nil:
			return ctx.Err() // the acquire was withdrawn; a grant that came first is released
		case errors.Is(err, leasehold.ErrTimedOut):
			backoff = 0 // the wait ended: at once, to the queue's tail
		case errors.Is(err, leasehold.ErrBusy), errors.Is(err, leasehold.ErrUnavailable), errors.Is(err, leasehold.ErrIndeterminate):
			backoff = min(backoffMax, max(backoffMin, 2*backoff))
			pause := time.NewTimer(backoff - time.Duration(le.rng.Int63n(int64(backoff/2)+1)))
			select {
			case <-pause.C:
			case <-ctx.Done():
				pause.Stop()
				return ctx.Err()
			}
		default:
			return err
		}
	}
}

// why a term ended on this side
type endCause int

const (
	endValidity endCause = iota // the ticket's validity minus the safety passed
	endLost                     // the keep-alive was lost (NotHeld, Expired, the client closed)
	endResigned
	endCancelled // Run's context ended
)

// lead runs the term of ticket: keep-alive, OnStartedLeading, and at its end OnStoppedLeading
// and the release.
func (le *LeaderElector) lead(ctx context.Context, ticket *leasehold.Ticket) {
	le.mu.Lock()
	stale := ticket.Token() <= le.lastTerm
	le.mu.Unlock()
	if stale { // a term is started at most once (tokens increase: a guard)
		le.release(ticket)
		return
	}
	keepAlive, err := ticket.KeepAlive(context.Background(), le.cfg.LeaseDuration)
	if err != nil { // the lease was checked by NewLeaderElector: not expected
		le.release(ticket)
		return
	}
	t := &term{ticket: ticket, safety: le.cfg.safety(), resign: make(chan struct{})}
	le.mu.Lock()
	le.current, le.lastTerm = t, ticket.Token()
	le.mu.Unlock()

	termCtx, cancel := context.WithCancel(context.WithValue(ctx, termKey{}, ticket.Token()))
	returned := make(chan struct{})
	started := t.valid() // not for a term already over at delivery (it is still ended and released)
	if started {
		go func() {
			defer close(returned)
			le.cfg.Callbacks.OnStartedLeading(termCtx)
		}()
	} else {
		close(returned)
	}
	cause := le.await(ctx, t, keepAlive)
	t.end()
	cancel()
	keepAlive.Stop()
	<-returned
	if started && le.cfg.Callbacks.OnStoppedLeading != nil {
		le.cfg.Callbacks.OnStoppedLeading()
	}
	le.mu.Lock()
	le.current = nil
	le.mu.Unlock()
	if cause == endCancelled && le.cfg.KeepLeaseOnCancel {
		return // the grant ends with its lease on the server
	}
	// Released only after OnStoppedLeading returned: the next term begins when this one has ended here.
	le.release(ticket)
}

// await returns when term t ends: the first of its validity minus the safety (moved on by each
// Extend), a lost keep-alive, Resign and the end of ctx.
func (le *LeaderElector) await(ctx context.Context, t *term, keepAlive *leasehold.KeepAlive) endCause {
	for {
		timer := time.NewTimer(time.Until(t.until()))
		select {
		case <-timer.C:
			if time.Now().Before(t.until()) {
				continue // an Extend moved the validity on
			}
			return endValidity
		case <-keepAlive.Lost():
			timer.Stop()
			return endLost
		case <-t.resign:
			timer.Stop()
			return endResigned
		case <-ctx.Done():
			timer.Stop()
			return endCancelled
		}
	}
}

// release hands the key to the next candidate; it waits for the answer at most releaseWait.
func (le *LeaderElector) release(ticket *leasehold.Ticket) {
	rctx, cancel := context.WithTimeout(context.Background(), releaseWait)
	defer cancel()
	ticket.Release(rctx) // NotHeld, Expired: the grant has ended anyway
}

func min(a, b time.Duration) time.Duration {
	if a < b {
		return a
	}
	return b
}

func max(a, b time.Duration) time.Duration {
	if a > b {
		return a
	}
	return b
}

package leasehold

import (
	"context"
	"errors"
	"testing"
	"time"
)

// The client-side rules of an Observation (9.15.2 to 9.15.4), fed frames as its sessions would
// hand them over: no server is involved in what these rules decide.

func bareObservation(key string) *Observation {
	return &Observation{key: key, events: make(chan Event, 1), stop: make(chan struct{}), lost: make(chan endReason, 1)}
}

// newSubscription makes the observation's next subscription current, as its run loop does.
func newSubscription(o *Observation) *request {
	r := newRequest(opObserve, o.key, time.Time{})
	r.obs = o
	o.mu.Lock()
	o.cur, o.curEvents = r, false
	o.mu.Unlock()
	return r
}

func next(t *testing.T, o *Observation) Event {
	t.Helper()
	select {
	case ev := <-o.events:
		return ev
	default:
		t.Fatal("no event was delivered")
		return Event{}
	}
}

func noEvent(t *testing.T, o *Observation, why string) {
	t.Helper()
	select {
	case ev := <-o.events:
		t.Fatalf("%s: got %+v", why, ev)
	default:
	}
}

func TestTokensNeverGoBackAcrossSubscriptions(t *testing.T) {
	o := bareObservation("lead")
	r1 := newSubscription(o)
	o.event(r1, answer{op: opObserve, state: 'H', cause: 1, token: 10, count: 1, value: []byte("n1")})
	if ev := next(t, o); ev.State != StateHeld || ev.Token != 10 || string(ev.Value) != "n1" || ev.Cause != CauseGrant || ev.Count != 1 {
		t.Fatalf("held by 10 with n1: got %+v", ev)
	}
	o.ended(r1, endBroken, errors.New("X 9"))
	if ev := next(t, o); ev.State != StateUnknown || ev.Err == nil {
		t.Fatalf("want Unknown with its reason, got %+v", ev)
	}
	<-o.lost
	r2 := newSubscription(o)
	o.event(r1, answer{op: opObserve, state: 'H', token: 12}) // the ended subscription: nothing of it
	noEvent(t, o, "an event of an ended subscription")
	// a new leader that knows no token on the key: Free with the highest token delivered
	o.event(r2, answer{op: opObserve, state: 'F'})
	if ev := next(t, o); ev.State != StateFree || ev.Token != 10 || ev.Cause != CauseCurrent {
		t.Fatalf("free, token max(0, 10): got %+v", ev)
	}
	o.event(r2, answer{op: opObserve, state: 'H', token: 5})
	o.event(r2, answer{op: opObserve, state: 'D', token: 9})
	noEvent(t, o, "H and D below the highest token delivered are stale")
	o.event(r2, answer{op: opObserve, state: 'S', cause: 1, token: 3, count: 2, limit: 4})
	if ev := next(t, o); ev.State != StateShared || ev.Token != 10 || ev.Count != 2 || ev.Limit != 4 {
		t.Fatalf("shared 2 of 4, token max(3, 10): got %+v", ev)
	}
	o.event(r2, answer{op: opObserve, state: 'G', token: 0})
	if ev := next(t, o); ev.State != StateRecoveryGrace || ev.Token != 10 {
		t.Fatalf("grace, token 10: got %+v", ev)
	}
	o.event(r2, answer{op: opObserve, state: 'D', cause: 3, token: 11})
	if ev := next(t, o); ev.State != StateLockDelay || ev.Token != 11 || ev.Value != nil {
		t.Fatalf("lock-delay of 11: got %+v", ev)
	}
}

func TestUnknownIsToldOnceUntilAnEventEndsIt(t *testing.T) {
	o := bareObservation("k")
	r := newSubscription(o)
	o.ended(r, endRedirect, errors.New("X 8"))
	noEvent(t, o, "following X 8 to the leader is no Unknown")
	if why := <-o.lost; why.kind != endRedirect {
		t.Fatalf("want the redirect, got %+v", why)
	}
	r = newSubscription(o)
	o.ended(r, endBroken, errors.New("connection refused"))
	if ev := next(t, o); ev.State != StateUnknown {
		t.Fatalf("a failed subscription: want Unknown, got %+v", ev)
	}
	<-o.lost
	for _, kind := range []endKind{endBusy, endLegacy, endBroken} {
		r = newSubscription(o)
		o.ended(r, kind, errors.New("again"))
		noEvent(t, o, "still unknown: not told again")
		if why := <-o.lost; why.kind != kind || why.hadEvents {
			t.Fatalf("want %d without events, got %+v", kind, why)
		}
	}
	r = newSubscription(o)
	o.event(r, answer{op: opObserve, state: 'F'})
	next(t, o)
	o.ended(r, endBroken, errors.New("broken"))
	if ev := next(t, o); ev.State != StateUnknown {
		t.Fatalf("known, then broken: want Unknown, got %+v", ev)
	}
	if why := <-o.lost; !why.hadEvents {
		t.Fatal("a subscription that delivered events starts the back-off over")
	}
}

// 9.15.2: one undelivered event at most, the newest, marked coalesced.
func TestASlowReaderGetsTheNewestEventMarkedCoalesced(t *testing.T) {
	o := bareObservation("k")
	r := newSubscription(o)
	for tok := uint64(1); tok <= 5; tok++ {
		o.event(r, answer{op: opObserve, state: 'H', cause: 1, token: tok, count: 1})
	}
	ev := next(t, o)
	if ev.Token != 5 || !ev.Coalesced {
		t.Fatalf("want the newest (5) marked coalesced, got %+v", ev)
	}
	noEvent(t, o, "one event at most was kept")
	o.event(r, answer{op: opObserve, state: 'F', cause: 2, token: 5})
	if ev := next(t, o); ev.Coalesced {
		t.Fatalf("an event read in time is not coalesced: %+v", ev)
	}
	o.event(r, answer{op: opObserve, state: 'H', cause: 1, token: 6, count: 1})
	o.ended(r, endBroken, errors.New("broken"))
	if ev := next(t, o); ev.State != StateUnknown || !ev.Coalesced {
		t.Fatalf("the Unknown replaces the unread event: got %+v", ev)
	}
}

func TestAProclaimWaitsForTheTurnOfTheOneBeforeIt(t *testing.T) {
	var f fifoTurn
	if err := f.lock(context.Background()); err != nil {
		t.Fatal(err)
	}
	order := make(chan int, 3)
	for i := 1; i <= 3; i++ {
		i := i
		go func() {
			if err := f.lock(context.Background()); err != nil {
				t.Error(err)
			}
			order <- i
			f.unlock()
		}()
		for { // each waiter queued before the next starts: call order is known
			f.mu.Lock()
			n := len(f.waiters)
			f.mu.Unlock()
			if n == i {
				break
			}
			time.Sleep(time.Millisecond) // the goroutine must run to queue itself
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := f.lock(ctx); err == nil {
		t.Fatal("a cancelled waiter must not get the turn")
	}
	f.unlock()
	for want := 1; want <= 3; want++ {
		if got := <-order; got != want {
			t.Fatalf("turn %d went to %d", want, got)
		}
	}
}

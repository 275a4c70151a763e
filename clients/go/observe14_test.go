package leasehold

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Observe against the real server (PROTOCOL.md section 16, client rule 9.15).

// Every change, in order, each once: a reader that keeps up sees each grant and release.
func TestAnObservationDeliversEveryChangeInOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	key := keyOf(t)
	c := direct(t)
	o := mustObserve(t, c, key)
	wantEvent(t, nextEvent(t, o), StateFree, 0, "", CauseCurrent)
	events := make(chan Event, 100)
	go func() {
		for ev := range o.Events() {
			events <- ev
		}
		close(events)
	}()
	var tokens []uint64
	for i := 0; i < 10; i++ {
		tk := mustAcquire(t, c, key, 0, 30*time.Second)
		tokens = append(tokens, tk.Token())
		if err := tk.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for i, tok := range tokens {
		for _, want := range []struct {
			state State
			cause Cause
		}{{StateHeld, CauseGrant}, {StateFree, CauseRelease}} {
			select {
			case ev := <-events:
				if ev.Coalesced {
					t.Logf("cycle %d: the reader fell behind (a coalesced event): %+v", i, ev)
					return // allowed by 9.15.2, and nothing more to check in order
				}
				wantEvent(t, ev, want.state, tok, "", want.cause)
			case <-time.After(10 * time.Second):
				t.Fatalf("cycle %d: no %v event within 10 s", i, want.state)
			}
		}
	}
}

// 9.15.2: a reader that does not read gets the newest state, marked coalesced.
func TestASlowObserverGetsTheLatestStateCoalesced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	key := keyOf(t)
	c := direct(t)
	o := mustObserve(t, c, key)
	wantEvent(t, nextEvent(t, o), StateFree, 0, "", CauseCurrent)
	for i := 0; i < 30; i++ {
		tk := mustAcquire(t, c, key, 0, 30*time.Second)
		if err := tk.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	last, err := c.Acquire(ctx, key, 0, 30*time.Second, WithValue([]byte("last")))
	if err != nil {
		t.Fatal(err)
	}
	defer last.Release(ctx)
	read, coalesced := 0, false
	for {
		ev := nextEvent(t, o)
		read++
		coalesced = coalesced || ev.Coalesced
		if ev.State == StateHeld && ev.Token == last.Token() {
			wantEvent(t, ev, StateHeld, last.Token(), "last", CauseGrant)
			break
		}
	}
	t.Logf("61 changes, %d events read, coalesced: %v", read, coalesced)
	if !coalesced || read > 3 {
		t.Fatalf("want at most a few events, the newest marked coalesced: read %d, coalesced %v", read, coalesced)
	}
}

// Close and a context that ends send U and close Events.
func TestClosingAnObservationSendsUAndClosesItsEvents(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	p := newProxy(t, server(t).addr)
	c := via(t, p, Options{PoolSize: 1})
	o := mustObserve(t, c, key)
	nextEvent(t, o)
	o.Close()
	if _, open := <-o.Events(); open {
		t.Fatal("Events must be closed after Close")
	}
	if o.Err() != nil {
		t.Fatalf("closed by Close: want no error, got %v", o.Err())
	}
	ctx, cancel := context.WithCancel(context.Background())
	o2, err := c.Observe(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	nextEvent(t, o2)
	cancel()
	eventually(t, 5*time.Second, "Events closed after the context's cancel", func() bool {
		select {
		case _, open := <-o2.Events():
			return !open
		default:
			return false
		}
	})
	if !errors.Is(o2.Err(), context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", o2.Err())
	}
	eventually(t, 5*time.Second, "a U for each watch", func() bool {
		observes, unobserves, _ := p.watchFrames()
		return len(observes) == 2 && len(unobserves) == 2 && unobserves[0] == observes[0] && unobserves[1] == observes[1]
	})
	// the session stays up for what else it carries
	mustAcquire(t, c, key, 0, 5*time.Second).Release(context.Background())
	if accepted, _, _, _ := p.stats(); accepted != 1 {
		t.Fatalf("want one session throughout, got %d", accepted)
	}
}

// 9.15.3: a broken session makes the observation Unknown (once), then it subscribes again and
// the new subscription's first event shows the key's state now.
func TestAnObservationAcrossABrokenSessionIsUnknownThenResubscribed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	key := keyOf(t)
	p := newProxy(t, server(t).addr)
	c := via(t, p, Options{PoolSize: 1})
	held := mustAcquire(t, direct(t), key, 0, 30*time.Second)
	o := mustObserve(t, c, key)
	wantEvent(t, nextEvent(t, o), StateHeld, held.Token(), "", CauseCurrent)
	p.refuse(true) // no session for a while: the key changes meanwhile
	p.closeAll()
	if ev := nextEvent(t, o); ev.State != StateUnknown || ev.Err == nil {
		t.Fatalf("a broken session: want Unknown with its reason, got %+v", ev)
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	next := mustAcquire(t, direct(t), key, 0, 30*time.Second)
	defer next.Release(ctx)
	time.Sleep(700 * time.Millisecond) // several refused attempts (50, 100, 200, 400 ms apart)
	select {
	case ev := <-o.Events():
		t.Fatalf("Unknown is told once while it stays unknown, got %+v", ev)
	default:
	}
	p.refuse(false)
	wantEvent(t, nextEvent(t, o), StateHeld, next.Token(), "", CauseCurrent)
	observes, _, _ := p.watchFrames()
	if len(observes) != 2 || observes[0] == observes[1] {
		t.Fatalf("want a second O with a new watch id, got %v", observes)
	}
}

// 9.15.3: an O answered B (the session's watch limit) subscribes nothing: Unknown, then tried
// again (50 ms doubling to 500 ms) until a watch is free. A server of its own: one watch per session.
func TestABusyObserveIsUnknownUntilAWatchIsFree(t *testing.T) {
	t.Parallel()
	srv := startServer(t, "", "--leasehold.max-watches-per-session=1")
	t.Cleanup(srv.close)
	key := keyOf(t)
	c := newClient(t, Options{Servers: []string{srv.addr}, PoolSize: 1})
	first := mustObserve(t, c, key)
	wantEvent(t, nextEvent(t, first), StateFree, 0, "", CauseCurrent)
	second := mustObserve(t, c, key)
	ev := nextEvent(t, second)
	if ev.State != StateUnknown || ev.Err == nil {
		t.Fatalf("an O answered B: want Unknown with its reason, got %+v", ev)
	}
	tk := mustAcquire(t, c, key, 0, 30*time.Second) // the session stays up for everything else
	defer tk.Release(context.Background())
	wantEvent(t, nextEvent(t, first), StateHeld, tk.Token(), "", CauseGrant)
	first.Close()
	wantEvent(t, nextEvent(t, second), StateHeld, tk.Token(), "", CauseCurrent)
}

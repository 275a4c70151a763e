package leasehold

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// Values and Proclaim against the real server (PROTOCOL.md section 17, client rule 9.16).

// nextEvent is the observation's next event, within 10 s (generous: it bounds a hang).
func nextEvent(t testing.TB, o *Observation) Event {
	t.Helper()
	return nextEventWithin(t, o, 10*time.Second)
}

func nextEventWithin(t testing.TB, o *Observation, atMost time.Duration) Event {
	t.Helper()
	select {
	case ev, ok := <-o.Events():
		if !ok {
			t.Fatalf("the observation of %s ended: %v", o.Key(), o.Err())
		}
		return ev
	case <-time.After(atMost):
		t.Fatalf("no event of %s within %v", o.Key(), atMost)
	}
	return Event{}
}

func mustObserve(t testing.TB, c *Client, key string) *Observation {
	t.Helper()
	o, err := c.Observe(context.Background(), key)
	if err != nil {
		t.Fatalf("observe %s: %v", key, err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}

func wantEvent(t testing.TB, ev Event, state State, token uint64, value string, cause Cause) {
	t.Helper()
	if ev.State != state || ev.Token != token || string(ev.Value) != value || ev.Cause != cause {
		t.Fatalf("want %v token %d value %q cause %d, got %+v", state, token, value, cause, ev)
	}
}

// A value goes with its grant (M), Proclaim replaces it (V), and it ends with the grant.
func TestAValueGoesWithItsGrantAndProclaimReplacesIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	key := keyOf(t)
	c := direct(t)
	o := mustObserve(t, c, key)
	wantEvent(t, nextEvent(t, o), StateFree, 0, "", CauseCurrent)
	tk, err := c.Acquire(ctx, key, 0, 30*time.Second, WithValue([]byte("n1")))
	if err != nil {
		t.Fatal(err)
	}
	wantEvent(t, nextEvent(t, o), StateHeld, tk.Token(), "n1", CauseGrant)
	if err := tk.Proclaim(ctx, []byte("n2\nwith a line feed")); err != nil {
		t.Fatalf("proclaim: %v", err)
	}
	wantEvent(t, nextEvent(t, o), StateHeld, tk.Token(), "n2\nwith a line feed", CauseValueSet)
	if err := tk.Proclaim(ctx, nil); err != nil {
		t.Fatalf("proclaim an empty value (clears it): %v", err)
	}
	wantEvent(t, nextEvent(t, o), StateHeld, tk.Token(), "", CauseValueSet)
	if err := tk.Release(ctx); err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, o)
	wantEvent(t, ev, StateFree, tk.Token(), "", CauseRelease)
	if ev.Coalesced {
		t.Fatalf("every change was read in time: %+v", ev)
	}
	// the next holder has its own value or none (17.2)
	next := mustAcquire(t, c, key, 0, 30*time.Second)
	defer next.Release(ctx)
	wantEvent(t, nextEvent(t, o), StateHeld, next.Token(), "", CauseGrant)
	if err := tk.Proclaim(ctx, []byte("late")); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("proclaim on a released ticket: want ErrNotHeld, got %v", err)
	}
}

// 9.16.2: Proclaimed, NotHeld from the server, and what is refused before anything is sent.
func TestProclaimOutcomesAndRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	key := keyOf(t)
	p := newProxy(t, server(t).addr)
	c := via(t, p, Options{PoolSize: 1})
	tk := mustAcquire(t, c, key, 0, 30*time.Second)
	if err := tk.Proclaim(ctx, []byte("n1")); err != nil {
		t.Fatalf("proclaim: %v", err)
	}
	if err := tk.Proclaim(ctx, bytes.Repeat([]byte("x"), 1025)); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("1025 bytes: want ErrInvalidArgument, got %v", err)
	}
	// the shared server's max-value-bytes is the default, 256: 300 bytes are not sent
	err := tk.Proclaim(ctx, bytes.Repeat([]byte("x"), 300))
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "max_value_bytes 256") {
		t.Fatalf("300 bytes: want ErrUnavailable naming max_value_bytes 256, got %v", err)
	}
	if _, err := c.Acquire(ctx, key+"/big", 0, 5*time.Second, WithValue(bytes.Repeat([]byte("x"), 300))); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("an acquire with 300 bytes of value: want ErrUnavailable, got %v", err)
	}
	if _, err := c.AcquireShared(ctx, key+"/shared", 0, 0, 5*time.Second, WithValue([]byte("n1"))); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a value on a shared acquire: want ErrInvalidArgument, got %v", err)
	}
	shared, err := c.AcquireShared(ctx, key+"/shared", 0, 0, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer shared.Release(ctx)
	if err := shared.Proclaim(ctx, []byte("n1")); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("proclaim on a shared ticket: want ErrInvalidArgument, got %v", err)
	}
	_, _, values := p.watchFrames()
	if len(values) != 1 || values[0] != tk.Token() {
		t.Fatalf("want the one V of token %d sent, got %v", tk.Token(), values)
	}
	// released by its token elsewhere: the server answers N
	if err := direct(t).Release(ctx, key, tk.Token()); err != nil {
		t.Fatal(err)
	}
	if err := tk.Proclaim(ctx, []byte("n2")); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("proclaim after the token was released elsewhere: want ErrNotHeld, got %v", err)
	}
	if _, _, values = p.watchFrames(); len(values) != 2 {
		t.Fatalf("the N came from the server: want a second V, got %v", values)
	}
}

// 9.16.3: a proclaim whose context ended keeps its turn until its V is answered; the next one
// goes out after it, so the last call's value stays.
func TestAProclaimWhoseContextEndedKeepsItsTurn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	key := keyOf(t)
	p := newProxy(t, server(t).addr)
	c := via(t, p, Options{PoolSize: 4})
	tk := mustAcquire(t, c, key, 0, 30*time.Second)
	defer tk.Release(ctx)
	p.set(func(p *faultProxy) { p.delayS2C = 300 * time.Millisecond })
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := tk.Proclaim(short, []byte("older")); !errors.Is(err, ErrIndeterminate) {
		t.Fatalf("a proclaim whose context ended first: want ErrIndeterminate, got %v", err)
	}
	start := time.Now()
	if err := tk.Proclaim(ctx, []byte("newer")); err != nil {
		t.Fatalf("proclaim: %v", err)
	}
	// its V waited for the older one's answer (300 ms late) before its own (300 ms late)
	within(t, "the newer proclaim, behind the older one's answer", time.Since(start), 450*time.Millisecond, 5*time.Second)
	p.set(func(p *faultProxy) { p.delayS2C = 0 })
	wantEvent(t, nextEvent(t, mustObserve(t, c, key)), StateHeld, tk.Token(), "newer", CauseCurrent)
	if _, _, values := p.watchFrames(); len(values) != 2 {
		t.Fatalf("want two V frames, got %v", values)
	}
}

// 9.13: a 1.3 session carries no value, no V and no O: refused unsent; ProtocolRevision 1.3 at once.
func TestValuesAndObserveOnA13Session(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	key := keyOf(t)
	pinned := newClient(t, Options{Servers: []string{server(t).addr}, ProtocolRevision: Revision13})
	if _, err := pinned.Observe(ctx, key); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("observe with ProtocolRevision 1.3: want ErrUnavailable, got %v", err)
	}
	tk := mustAcquire(t, pinned, key, 0, 10*time.Second)
	if err := tk.Proclaim(ctx, []byte("n1")); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("proclaim with ProtocolRevision 1.3: want ErrUnavailable, got %v", err)
	}
	tk.Release(ctx)

	old := newProxy(t, server(t).addr)
	old.set(func(p *faultProxy) { p.rejectHello = true })
	c := via(t, old, Options{PoolSize: 1})
	_, err := c.Acquire(ctx, key, 0, 10*time.Second, WithValue([]byte("n1")))
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "1.3") {
		t.Fatalf("a value for a 1.3 server: want ErrUnavailable naming the revision, got %v", err)
	}
	tk = mustAcquire(t, c, key, 0, 10*time.Second)
	defer tk.Release(ctx)
	if err := tk.Proclaim(ctx, []byte("n1")); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("proclaim for a 1.3 server: want ErrUnavailable, got %v", err)
	}
	o := mustObserve(t, c, key)
	if ev := nextEvent(t, o); ev.State != StateUnknown {
		t.Fatalf("observing through a 1.3 server: want Unknown, got %+v", ev)
	}
	time.Sleep(1200 * time.Millisecond) // two or three 500 ms retries must pass, each finding 1.3 again
	select {
	case ev := <-o.Events():
		t.Fatalf("Unknown is told once while it stays unknown, got %+v", ev)
	default:
	}
	observes, _, values := old.watchFrames()
	if len(observes) != 0 || len(values) != 0 {
		t.Fatalf("nothing of 1.4 may reach a 1.3 server: O %v, V %v", observes, values)
	}
}

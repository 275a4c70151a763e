package leasehold

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Revision 1.4 against the real server (PROTOCOL.md 9.13 and 9.14): Hello first, millisecond
// waits in M, the fallback to 1.3 frames on an X 1 to Hello, and Withdraw on a cancelled context.

// queuedAt waits until the proxy has seen n acquires and returns them.
func queuedAt(t testing.TB, p *faultProxy, n int) []seenAcquire {
	t.Helper()
	eventually(t, 5*time.Second, "the acquires at the server", func() bool { _, _, s, _ := p.stats(); return len(s) >= n })
	_, _, seen, _ := p.stats()
	return seen
}

// A 200 ms wait on a held key: M carries wait_ms 200 and the server's T ends the call after
// 200-300 ms (was 1 s with whole-second A waits).
func TestAMillisecondWaitEndsAfterItsMilliseconds(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	held := mustAcquire(t, direct(t), key, 0, 30*time.Second)
	defer held.Release(context.Background())
	p := newProxy(t, server(t).addr)
	c := via(t, p, Options{PoolSize: 1})
	if _, err := c.Ping(context.Background()); err != nil { // the session is up: time the acquire alone
		t.Fatal(err)
	}
	start := time.Now()
	_, err := c.Acquire(context.Background(), key, 200*time.Millisecond, 5*time.Second)
	took := time.Since(start)
	t.Logf("a 200 ms wait on a held key ended after %v: %v", took, err)
	if !errors.Is(err, ErrTimedOut) {
		t.Fatalf("want ErrTimedOut, got %v", err)
	}
	within(t, "a 200 ms wait", took, 200*time.Millisecond, 1500*time.Millisecond)
	seen := queuedAt(t, p, 1)
	if !seen[0].milli || seen[0].waitMs < 190 || seen[0].waitMs > 200 {
		t.Fatalf("want one M with wait_ms 190..200, got %v", seen)
	}

	// a 200 ms context deadline on a 10 s wait: D moves to it, and the call returns at it
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, err = c.Acquire(ctx, key, 10*time.Second, 5*time.Second)
	took = time.Since(start)
	t.Logf("a 200 ms context deadline on a held key ended after %v: %v", took, err)
	if !errors.Is(err, ErrIndeterminate) && !errors.Is(err, ErrTimedOut) {
		t.Fatalf("want ErrIndeterminate (the context's deadline came first) or ErrTimedOut, got %v", err)
	}
	within(t, "a 200 ms context deadline", took, 200*time.Millisecond, 1500*time.Millisecond)
	seen = queuedAt(t, p, 2)
	if !seen[1].milli || seen[1].waitMs < 150 || seen[1].waitMs > 200 {
		t.Fatalf("want the second M with wait_ms 150..200, not a second rounded up, got %v", seen[1])
	}
}

// 9.14: a context cancelled while the acquire waits in the server's queue ends the call at once
// and sends W; the server answers it T, and no orphaned waiter stays ahead of the next one.
func TestACancelledQueuedAcquireIsWithdrawnAndLeavesNoOrphan(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	held := mustAcquire(t, direct(t), key, 0, 30*time.Second)
	p := newProxy(t, server(t).addr)
	c := via(t, p, Options{PoolSize: 1})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Acquire(ctx, key, 20*time.Second, 30*time.Second)
		errc <- err
	}()
	cancelledOwner := queuedAt(t, p, 1)[0].owner
	next := make(chan *Ticket, 1)
	go func() {
		tk, err := c.Acquire(context.Background(), key, 20*time.Second, 30*time.Second)
		if err != nil {
			t.Errorf("the next waiter: %v", err)
		}
		next <- tk
	}()
	queuedAt(t, p, 2)
	start := time.Now()
	cancel()
	err := <-errc
	t.Logf("cancelled after %v: %v", time.Since(start), err)
	// 9.14.4: a cancel ends the call at once with what is true then (it was written:
	// Indeterminate); the W goes on without the caller
	if !errors.Is(err, ErrIndeterminate) || !errors.Is(err, context.Canceled) {
		t.Fatalf("want ErrIndeterminate (context.Canceled), got %v", err)
	}
	if errors.Is(err, ErrTimedOut) {
		t.Fatalf("one outcome only: %v", err)
	}
	within(t, "the cancelled call's return", time.Since(start), 0, 500*time.Millisecond)
	// the withdraw's proof reaches the client after the call returned: the server's T
	eventually(t, 5*time.Second, "the T of the withdrawn acquire", func() bool { return p.timedOut(cancelledOwner) })
	held.Release(context.Background())
	start = time.Now()
	tk := <-next
	if tk == nil {
		t.FailNow()
	}
	defer tk.Release(context.Background())
	within(t, "the next waiter's grant after the release", time.Since(start), 0, 500*time.Millisecond)
	if tok, ok := p.grantedToken(cancelledOwner); ok {
		t.Fatalf("the withdrawn acquire was granted token %d: an orphaned waiter", tok)
	}
	p.mu.Lock()
	withdraws := append([]uint64(nil), p.withdraws...)
	p.mu.Unlock()
	if len(withdraws) != 1 || withdraws[0] != cancelledOwner {
		t.Fatalf("want one W for owner %d, got %v", cancelledOwner, withdraws)
	}
}

// 15.2.3: the grant came before the W (delayed by the proxy): the client releases that token,
// the caller gets no ticket and holds nothing.
func TestAGrantThatRacedTheWithdrawIsReleased(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	held := mustAcquire(t, direct(t), key, 0, 30*time.Second)
	p := newProxy(t, server(t).addr)
	c := via(t, p, Options{PoolSize: 1})
	ctx, cancel := context.WithCancel(context.Background())
	type outcome struct {
		tk  *Ticket
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		tk, err := c.Acquire(ctx, key, 20*time.Second, 30*time.Second)
		done <- outcome{tk, err}
	}()
	owner := queuedAt(t, p, 1)[0].owner
	p.set(func(p *faultProxy) { p.delayC2S = time.Second }) // the W reaches the server late
	cancel()
	// the proxy records what it reads before delaying it: the W is on its way
	eventually(t, 5*time.Second, "the W at the proxy", func() bool {
		p.caughtUp()
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.withdraws) == 1
	})
	held.Release(context.Background()) // the server grants the queued acquire before the W arrives
	res := <-done
	if res.tk != nil || !errors.Is(res.err, ErrIndeterminate) || !errors.Is(res.err, context.Canceled) {
		t.Fatalf("want no ticket and ErrIndeterminate (context.Canceled), got %v, %v", res.tk, res.err)
	}
	// the call returned at the cancel; the grant that came before the W reaches the client after
	var token uint64
	eventually(t, 5*time.Second, fmt.Sprintf("a grant to owner %d before the W", owner), func() bool {
		tok, ok := p.grantedToken(owner)
		token = tok
		return ok
	})
	t.Logf("granted token %d before the withdraw: %v", token, res.err)
	eventually(t, 5*time.Second, "the release of the token that raced the W", func() bool { return p.released(token) })
	// free again well before the 30 s lease would end: the client's release reached the server
	assertFreeSoon(t, direct(t), key)
	if current, err := direct(t).Check(context.Background(), key, token); current || err != nil {
		t.Fatalf("the raced token must not be held any more: current %v, %v", current, err)
	}
}

// 9.13: a 1.3 server answers H with X 1 and closes; the client opens again with Ping and sends
// A frames there, losing nothing, until a session to it fails; then it asks with H again.
func TestAClientFallsBackTo13FramesWhenHelloIsAnsweredX1(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	p := newProxy(t, server(t).addr)
	p.set(func(p *faultProxy) { p.rejectHello = true })
	c := via(t, p, Options{PoolSize: 1})
	mustAcquire(t, c, key, 2*time.Second, 5*time.Second).Release(context.Background())
	held := mustAcquire(t, direct(t), key, 0, 30*time.Second)
	if _, err := c.Acquire(context.Background(), key, 1500*time.Millisecond, 5*time.Second); !errors.Is(err, ErrTimedOut) {
		t.Fatalf("want ErrTimedOut on the 1.3 session, got %v", err)
	}
	held.Release(context.Background())
	accepted, _, seen, _ := p.stats()
	p.mu.Lock()
	hellos, withdraws := p.hellos, len(p.withdraws)
	p.mu.Unlock()
	if accepted != 1 || hellos != 1 || withdraws != 0 {
		t.Fatalf("want one rejected Hello, then one Ping session: %d sessions, %d hellos, %d withdraws", accepted, hellos, withdraws)
	}
	if len(seen) != 2 || seen[0].milli || seen[1].milli || seen[1].wait != 2 {
		t.Fatalf("want two A frames (the second with wire wait ceil(1.5 s) = 2), got %v", seen)
	}
	// a cancelled acquire on a 1.3 session sends no W (there is none): Indeterminate as in 1.3
	held = mustAcquire(t, direct(t), key, 0, 30*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := c.Acquire(ctx, key, 2*time.Second, 5*time.Second); errc <- err }()
	queuedAt(t, p, 3)
	cancel()
	if err := <-errc; !errors.Is(err, ErrIndeterminate) {
		t.Fatalf("cancelled on a 1.3 session: want ErrIndeterminate, got %v", err)
	}
	held.Release(context.Background())

	// the session fails: the next one asks with H again (the server may have been upgraded)
	p.set(func(p *faultProxy) { p.rejectHello = false })
	p.closeAll()
	eventually(t, 5*time.Second, "an acquire on a new session", func() bool {
		tk, err := c.Acquire(context.Background(), key, time.Second, 5*time.Second)
		if err == nil {
			tk.Release(context.Background())
		}
		return err == nil
	})
	p.mu.Lock()
	hellos = p.hellos
	p.mu.Unlock()
	_, _, seen, _ = p.stats()
	if hellos != 2 || !seen[len(seen)-1].milli {
		t.Fatalf("want a second Hello and an M after the failed session: %d hellos, last %v", hellos, seen[len(seen)-1])
	}
}

// ProtocolRevision pins what is sent: 1.3 never sends H or M; 1.4 does not fall back.
func TestProtocolRevisionPinsTheFrames(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	p := newProxy(t, server(t).addr)
	c := via(t, p, Options{PoolSize: 1, ProtocolRevision: Revision13})
	mustAcquire(t, c, key, 300*time.Millisecond, 5*time.Second).Release(context.Background())
	_, _, seen, _ := p.stats()
	p.mu.Lock()
	hellos := p.hellos
	p.mu.Unlock()
	if hellos != 0 || len(seen) != 1 || seen[0].milli || seen[0].wait != 1 {
		t.Fatalf("1.3: want no Hello and one A with wire wait 1, got %d hellos, %v", hellos, seen)
	}

	old := newProxy(t, server(t).addr)
	old.set(func(p *faultProxy) { p.rejectHello = true })
	strict := via(t, old, Options{PoolSize: 1, ProtocolRevision: Revision14})
	_, err := strict.Acquire(context.Background(), key, time.Second, 5*time.Second)
	var serr *ServerError
	if !errors.Is(err, ErrUnavailable) || !errors.As(err, &serr) || serr.Code != 1 {
		t.Fatalf("1.4 against a 1.3 server: want ErrUnavailable with the X 1, got %v", err)
	}
	if _, err := New(Options{Servers: []string{"h"}, ProtocolRevision: "1.5"}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("an unknown revision: want ErrInvalidArgument, got %v", err)
	}
}

// 9.13: a wait longer than the session's maximum (the server's max-wait, 255 s by default; 255 s
// on a 1.3 session) is not sent, not cut short: Unavailable, even on a free key.
func TestAWaitPastTheServersMaxWaitIsNotSent(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	p := newProxy(t, server(t).addr)
	for _, rev := range []string{RevisionAuto, Revision13} {
		c := via(t, p, Options{PoolSize: 1, ProtocolRevision: rev})
		_, err := c.Acquire(context.Background(), key, 300*time.Second, 5*time.Second)
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "maximum wait 4m15s") {
			t.Fatalf("%s: a 300 s wait: want ErrUnavailable naming the maximum 4m15s, got %v", rev, err)
		}
		mustAcquire(t, c, key, 255*time.Second, 5*time.Second).Release(context.Background())
	}
	if _, _, seen, _ := p.stats(); len(seen) != 2 {
		t.Fatalf("want only the two 255 s acquires sent, got %v", seen)
	}
}

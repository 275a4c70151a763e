package leasehold

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// The client rules of PROTOCOL.md section 9, each shown against the real server through a
// faultProxy the test controls (the Go counterparts of the Java client's
// ClientSemanticsIntegrationTests). Bounds are generous: two noisy cores.

func via(t testing.TB, p *faultProxy, opts Options) *Client {
	opts.Servers = append(opts.Servers, p.addr)
	return newClient(t, opts)
}

func keyOf(t testing.TB) string { return "go/" + t.Name() }

func assertFreeSoon(t testing.TB, c *Client, key string) {
	t.Helper()
	eventually(t, 8*time.Second, key+" free again", func() bool {
		tk, err := c.Acquire(context.Background(), key, 0, 5*time.Second)
		if err != nil {
			return false
		}
		tk.Release(context.Background())
		return true
	})
}

func within(t testing.TB, what string, d, lo, hi time.Duration) {
	t.Helper()
	if d < lo || d > hi {
		t.Fatalf("%s took %v, expected between %v and %v", what, d, lo, hi)
	}
}

// 9.2: a new owner for every call.
func TestEveryCallGetsANewOwner(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	held := mustAcquire(t, direct(t), key, 0, 30*time.Second)
	defer held.Release(context.Background())
	p := newProxy(t, server(t).addr)
	c := via(t, p, Options{PoolSize: 1})
	var wg sync.WaitGroup
	for i := 0; i < 23; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Acquire(context.Background(), key, 0, 5*time.Second); !errors.Is(err, ErrTimedOut) {
				t.Errorf("want ErrTimedOut, got %v", err)
			}
		}()
	}
	wg.Wait()
	_, _, seen, _ := p.stats()
	owners := map[uint64]bool{}
	for _, a := range seen {
		owners[a.owner] = true
	}
	if len(seen) != 23 || len(owners) != 23 {
		t.Fatalf("want 23 acquires with 23 owners, got %d with %d", len(seen), len(owners))
	}
}

// 9.3 and 9.5: a late connection sends only the wait left of the one deadline.
func TestALateConnectionSendsOnlyTheWaitLeft(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	held := mustAcquire(t, direct(t), key, 0, 60*time.Second)
	defer held.Release(context.Background())
	p := newProxy(t, server(t).addr)
	p.set(func(p *faultProxy) { p.acceptDelay = 2200 * time.Millisecond })
	c := via(t, p, Options{PoolSize: 1, ConnectTimeout: 4 * time.Second})
	start := time.Now()
	_, err := c.Acquire(context.Background(), key, 5*time.Second, 5*time.Second)
	if !errors.Is(err, ErrTimedOut) {
		t.Fatalf("want ErrTimedOut, got %v", err)
	}
	// ceil(5 - 2.2) = 3, not a fresh 5: T about 5 s after the call, not 7.2 s
	within(t, "the acquire", time.Since(start), 4500*time.Millisecond, 6900*time.Millisecond)
	_, _, seen, _ := p.stats()
	if len(seen) != 1 || seen[0].wait < 2 || seen[0].wait > 3 {
		t.Fatalf("want one acquire with wire wait 2..3, got %v", seen)
	}
}

func TestWireWaitIsTheTimeLeftRoundedUpAndAtMost255(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	p := newProxy(t, server(t).addr)
	c := via(t, p, Options{})
	mustAcquire(t, c, key, 255*time.Second, 5*time.Second).Release(context.Background())
	mustAcquire(t, c, key, 7*time.Second, 5*time.Second).Release(context.Background())
	_, _, seen, _ := p.stats()
	if len(seen) != 2 || seen[0].wait != 255 || seen[1].wait != 7 {
		t.Fatalf("want wire waits 255 and 7, got %v", seen)
	}
}

// 9.4: definitely not sent → another session, same owner, same D.
func TestARequestDefinitelyNotSentMovesToAnotherSessionWithItsOwnerAndDeadline(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	held := mustAcquire(t, direct(t), key, 0, 60*time.Second)
	defer held.Release(context.Background())
	silent := newProxy(t, server(t).addr)
	silent.set(func(p *faultProxy) { p.stallS2C = true }) // TCP works; the opening Ping is never answered
	p := newProxy(t, server(t).addr)
	c := newClient(t, Options{Servers: []string{silent.addr, p.addr}, PoolSize: 1, ConnectTimeout: 1500 * time.Millisecond})
	start := time.Now()
	_, err := c.Acquire(context.Background(), key, 5*time.Second, 5*time.Second)
	if !errors.Is(err, ErrTimedOut) {
		t.Fatalf("want ErrTimedOut, got %v", err)
	}
	within(t, "T at the original D (5 s)", time.Since(start), 4500*time.Millisecond, 6300*time.Millisecond)
	accepted, starts, _, _ := silent.stats()
	if accepted != 1 || starts != 0 {
		t.Fatalf("the silent proxy: %d connections, %d acquire bytes (want 1, 0)", accepted, starts)
	}
	_, _, seen, _ := p.stats()
	if len(seen) != 1 || seen[0].wait < 3 || seen[0].wait > 4 {
		t.Fatalf("want one acquire with wire wait ceil(3.5) = 3..4, got %v", seen)
	}
}

// wait = 0 is retried only while certainly unsent: the silent session takes nothing, and the
// one immediate attempt goes out once, with wire wait 0, on the next session.
func TestWaitZeroMovesOnlyWhileUnsentAndIsSentOnce(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	held := mustAcquire(t, direct(t), key, 0, 60*time.Second)
	defer held.Release(context.Background())
	silent := newProxy(t, server(t).addr)
	silent.set(func(p *faultProxy) { p.stallS2C = true })
	p := newProxy(t, server(t).addr)
	c := newClient(t, Options{Servers: []string{silent.addr, p.addr}, PoolSize: 1,
		ConnectTimeout: time.Second, TransportDeadline: 4 * time.Second})
	start := time.Now()
	if _, err := c.Acquire(context.Background(), key, 0, 5*time.Second); !errors.Is(err, ErrTimedOut) {
		t.Fatalf("want ErrTimedOut, got %v", err)
	}
	within(t, "the acquire", time.Since(start), 900*time.Millisecond, 3500*time.Millisecond)
	_, starts, _, _ := silent.stats()
	_, _, seen, _ := p.stats()
	if starts != 0 || len(seen) != 1 || seen[0].wait != 0 {
		t.Fatalf("want nothing on the silent session and one wait-0 acquire, got %d and %v", starts, seen)
	}

	// a possibly-sent wait = 0 (its bytes cut on the way) is Indeterminate, and never resent
	cut := newProxy(t, server(t).addr)
	cut.set(func(p *faultProxy) { p.cutC2S = 10 + 6 })
	c2 := newClient(t, Options{Servers: []string{cut.addr}, PoolSize: 2})
	if _, err := c2.Acquire(context.Background(), key+"-cut", 0, 5*time.Second); !errors.Is(err, ErrIndeterminate) {
		t.Fatalf("want ErrIndeterminate, got %v", err)
	}
	cut.set(func(p *faultProxy) { p.cutC2S = -1 })
	if _, err := c2.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, starts, seen, _ := cut.stats(); starts != 1 || len(seen) != 0 {
		t.Fatalf("want one partial acquire and no resend, got %d starts, %v", starts, seen)
	}
}

func TestAPossiblySentAcquireIsNeverResent(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	p := newProxy(t, server(t).addr)
	p.set(func(p *faultProxy) { p.cutC2S = 10 + 6 }) // the opening Ping passes, then 6 bytes of the Acquire
	c := via(t, p, Options{PoolSize: 2})
	start := time.Now()
	_, err := c.Acquire(context.Background(), key, 10*time.Second, 5*time.Second)
	if !errors.Is(err, ErrIndeterminate) {
		t.Fatalf("want ErrIndeterminate, got %v", err)
	}
	within(t, "Indeterminate at once, not at D", time.Since(start), 0, 3*time.Second)
	p.set(func(p *faultProxy) { p.cutC2S = -1 })
	if _, err := c.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, starts, seen, _ := p.stats(); starts != 1 || len(seen) != 0 {
		t.Fatalf("want one partial acquire and no resend, got %d starts, %v", starts, seen)
	}
	assertFreeSoon(t, direct(t), key)
}

// 9.9: a broken session makes its unanswered Acquires Indeterminate at once.
func TestABrokenSessionMakesItsUnansweredAcquiresIndeterminateAtOnce(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	d := direct(t)
	var held []*Ticket
	for i := 0; i < 5; i++ {
		held = append(held, mustAcquire(t, d, key+string(rune('0'+i)), 0, 60*time.Second))
	}
	p := newProxy(t, server(t).addr)
	c := via(t, p, Options{PoolSize: 1})
	errs := make(chan error, 5)
	for i := 0; i < 5; i++ {
		k := key + string(rune('0'+i))
		go func() {
			_, err := c.Acquire(context.Background(), k, 60*time.Second, 5*time.Second)
			errs <- err
		}()
	}
	eventually(t, 5*time.Second, "5 acquires at the server", func() bool { _, _, s, _ := p.stats(); return len(s) == 5 })
	time.Sleep(300 * time.Millisecond) // let the server queue them
	start := time.Now()
	p.closeAll()
	for i := 0; i < 5; i++ {
		if err := <-errs; !errors.Is(err, ErrIndeterminate) {
			t.Fatalf("want ErrIndeterminate, got %v", err)
		}
	}
	within(t, "Indeterminate after the break", time.Since(start), 0, 2*time.Second)
	for i, h := range held {
		h.Release(context.Background())
		assertFreeSoon(t, d, key+string(rune('0'+i))) // the server dropped the closed session's waiters
	}
}

// A lost answer: the grant is Indeterminate, never resent, and ends with its lease.
func TestAGrantWhoseAnswerIsLostEndsWithItsLease(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	p := newProxy(t, server(t).addr)
	p.set(func(p *faultProxy) { p.cutS2C = 10 + 5 }) // the Pong passes, the A is cut after 5 bytes
	c := via(t, p, Options{PoolSize: 1})
	start := time.Now()
	_, err := c.Acquire(context.Background(), key, 5*time.Second, 2*time.Second)
	if !errors.Is(err, ErrIndeterminate) {
		t.Fatalf("want ErrIndeterminate, got %v", err)
	}
	within(t, "Indeterminate at once", time.Since(start), 0, 2500*time.Millisecond)
	_, _, seen, _ := p.stats()
	if len(seen) != 1 {
		t.Fatalf("want exactly one acquire sent (never a resend), got %v", seen)
	}
	if _, ok := p.grantedToken(seen[0].owner); !ok {
		t.Fatal("the server did not grant")
	}
	d := direct(t)
	if _, err := d.Acquire(context.Background(), key, 0, 5*time.Second); !errors.Is(err, ErrTimedOut) {
		t.Fatalf("the unobserved grant must still hold the key: %v", err)
	}
	after := mustAcquire(t, d, key, 5*time.Second, 5*time.Second)
	within(t, "free at the 2 s lease's end", time.Since(start), 1900*time.Millisecond, 5*time.Second)
	after.Release(context.Background())
	if _, _, seen, _ := p.stats(); len(seen) != 1 {
		t.Fatalf("resent: %v", seen)
	}
}

// 9.7: a grant reaching the gate after D is released by its token; the outcome is Indeterminate.
func TestAGrantArrivingAfterTheDeadlineIsReleasedAndIndeterminate(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	held := mustAcquire(t, direct(t), key, 0, 60*time.Second)
	p := newProxy(t, server(t).addr)
	c := via(t, p, Options{PoolSize: 1})
	if _, err := c.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.set(func(p *faultProxy) { p.delayS2C = 1200 * time.Millisecond })
	start := time.Now()
	errc := make(chan error, 1)
	go func() {
		_, err := c.Acquire(context.Background(), key, 2*time.Second, 30*time.Second)
		errc <- err
	}()
	// the grant at ~1.4 s; its A, delayed 1.2 s, reaches the gate at ~2.6 s > D = 2 s
	time.Sleep(1400*time.Millisecond - time.Since(start))
	if err := held.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, ErrIndeterminate) {
		t.Fatalf("want ErrIndeterminate, got %v", err)
	}
	_, _, seen, _ := p.stats()
	token, ok := p.grantedToken(seen[0].owner)
	if !ok {
		t.Fatal("the server did not grant")
	}
	eventually(t, 8*time.Second, "the compensating release of the late grant's token", func() bool { return p.released(token) })
	assertFreeSoon(t, direct(t), key)
	within(t, "freed long before the 30 s lease", time.Since(start), 0, 15*time.Second)
}

func TestAGrantPastItsSafeValidityIsNotDelivered(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	p := newProxy(t, server(t).addr)
	c := via(t, p, Options{MarginFloor: 1500 * time.Millisecond}) // a 1 s lease is never valid
	if _, err := c.Acquire(context.Background(), key, 0, time.Second); !errors.Is(err, ErrIndeterminate) {
		t.Fatalf("want ErrIndeterminate, got %v", err)
	}
	_, _, seen, _ := p.stats()
	token, ok := p.grantedToken(seen[0].owner)
	if !ok {
		t.Fatal("the server did not grant")
	}
	eventually(t, 5*time.Second, "the compensating release", func() bool { return p.released(token) })
}

// 9.8: T after D stays definitive.
func TestTimedOutAfterTheDeadlineIsStillDefinitive(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	held := mustAcquire(t, direct(t), key, 0, 60*time.Second)
	defer held.Release(context.Background())
	p := newProxy(t, server(t).addr)
	c := via(t, p, Options{TransportDeadline: time.Second, ResponseGrace: 8 * time.Second})
	if _, err := c.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.set(func(p *faultProxy) { p.delayS2C = 1500 * time.Millisecond })
	for _, wait := range []time.Duration{time.Second, 0} {
		start := time.Now()
		if _, err := c.Acquire(context.Background(), key, wait, 5*time.Second); !errors.Is(err, ErrTimedOut) {
			t.Fatalf("wait %v: want ErrTimedOut, got %v", wait, err)
		}
		within(t, "T after D", time.Since(start), 1400*time.Millisecond, 7*time.Second)
	}
}

// 9.8: no answer by D + grace closes that session, and the server drops the waiter.
func TestNoAnswerByDeadlinePlusGraceClosesThatSession(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	held := mustAcquire(t, direct(t), key, 0, 60*time.Second)
	p := newProxy(t, server(t).addr)
	c := via(t, p, Options{PoolSize: 1, ResponseGrace: time.Second})
	if _, err := c.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	// the Acquire reaches the server 4 s late with wire wait 5: the server would keep the waiter
	// until about 9 s; D + grace is 6 s
	p.set(func(p *faultProxy) { p.delayC2S = 4 * time.Second; p.swallow = true })
	start := time.Now()
	if _, err := c.Acquire(context.Background(), key, 5*time.Second, 5*time.Second); !errors.Is(err, ErrIndeterminate) {
		t.Fatalf("want ErrIndeterminate, got %v", err)
	}
	within(t, "Indeterminate at D + grace", time.Since(start), 5900*time.Millisecond, 7500*time.Millisecond)
	eventually(t, 2*time.Second, "the session closed", func() bool { return p.openConnections() == 0 })
	// The server learns of the close on its event loop; a Release on another session in the
	// same millisecond could still find the waiter. Half a second settles that (the waiter's
	// own wait runs until about 9 s, so the point of the test stands).
	time.Sleep(500 * time.Millisecond)
	held.Release(context.Background())
	if time.Since(start) > 8500*time.Millisecond {
		t.Fatalf("released too late (%v) to show the waiter was dropped", time.Since(start))
	}
	now, err := direct(t).Acquire(context.Background(), key, 0, 5*time.Second)
	if err != nil {
		_, _, seen, _ := p.stats()
		t.Fatalf("the closed session's waiter must have been dropped: %v (after %v; the proxy saw %v)", err, time.Since(start), seen)
	}
	now.Release(context.Background())
}

// 9.8: at D a queued request is not sent (Unavailable) and a partly written one closes its
// exact session (Indeterminate).
func TestAtTheDeadlineAQueuedRequestIsNotSentAndAPartlyWrittenOneClosesItsSession(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	p := newProxyWithBuffer(t, server(t).addr, 4096)
	// The client's send buffer capped at 64 KB (the kernel doubles it) and the proxy's receive
	// buffer at 4 KB: a stalled proxy blocks the writer after ~130 KB, where the kernel's
	// autotuning alone absorbed 2.3-2.4 MB of the 2.5 MB below (and so, once, all of it).
	c := via(t, p, Options{PoolSize: 1, ResponseGrace: 3 * time.Second, writeBuffer: 64 * 1024})
	if _, err := c.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.set(func(p *faultProxy) { p.stallC2S = true }) // nothing more is read: the client's writes block
	longKey := key + "-" + strings.Repeat("x", 400)
	const n = 6000 // ~2.5 MB: far more than the capped socket buffers take
	type out struct {
		err  error
		late time.Duration
	}
	results := make(chan out, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		k := fmt.Sprintf("%s%d", longKey, i)
		go func() {
			defer wg.Done()
			start := time.Now()
			_, err := c.Acquire(context.Background(), k, 2*time.Second, 5*time.Second)
			results <- out{err, time.Since(start) - 2*time.Second}
		}()
	}
	wg.Wait()
	close(results)
	var sent, unsent int
	var latest time.Duration
	for r := range results {
		switch {
		case errors.Is(r.err, ErrIndeterminate):
			sent++
		case errors.Is(r.err, ErrUnavailable):
			unsent++
		default:
			t.Fatalf("want Indeterminate or Unavailable, got %v", r.err)
		}
		if r.late > latest {
			latest = r.late
		}
	}
	t.Logf("%d possibly sent (Indeterminate), %d never sent (Unavailable)", sent, unsent)
	if sent == 0 || unsent == 0 {
		t.Fatalf("want both the batch being written (Indeterminate) and queued ones (Unavailable): %d, %d", sent, unsent)
	}
	if sent > n/2 { // batches of maxBatch (256): only those the socket took or is taking are possibly sent
		t.Fatalf("%d of %d possibly sent: the writer took more than the batches the stalled socket could take", sent, n)
	}
	if latest > 2*time.Second { // the race detector slows 6000 goroutines' timers
		t.Fatalf("decided at D, not D + grace (3 s): the latest came %v after D", latest)
	}
	p.set(func(p *faultProxy) { p.stallC2S = false })
	eventually(t, 5*time.Second, "the client to have closed that session", func() bool { return !p.isOpen(0) })
}

func TestWaitZeroIsOneImmediateAttemptUnderTheTransportDeadline(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	held := mustAcquire(t, direct(t), key, 0, 60*time.Second)
	defer held.Release(context.Background())
	p := newProxy(t, server(t).addr)
	p.set(func(p *faultProxy) { p.acceptDelay = 1500 * time.Millisecond }) // late, inside the 3 s deadline
	c := via(t, p, Options{PoolSize: 1, TransportDeadline: 3 * time.Second, ConnectTimeout: 2500 * time.Millisecond})
	start := time.Now()
	if _, err := c.Acquire(context.Background(), key, 0, 5*time.Second); !errors.Is(err, ErrTimedOut) {
		t.Fatalf("want ErrTimedOut, got %v", err)
	}
	within(t, "the acquire", time.Since(start), 1400*time.Millisecond, 3*time.Second)
	if _, _, seen, _ := p.stats(); len(seen) != 1 || seen[0].wait != 0 {
		t.Fatalf("want one acquire with wire wait 0, got %v", seen)
	}

	// a connection later than the transport deadline: nothing is sent, Unavailable at D
	later := newProxy(t, server(t).addr)
	later.set(func(p *faultProxy) { p.acceptDelay = 2500 * time.Millisecond })
	c2 := via(t, later, Options{PoolSize: 1, TransportDeadline: time.Second, ConnectTimeout: 2 * time.Second})
	start = time.Now()
	if _, err := c2.Acquire(context.Background(), key, 0, 5*time.Second); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("want ErrUnavailable, got %v", err)
	}
	within(t, "Unavailable at D", time.Since(start), 900*time.Millisecond, 2400*time.Millisecond)
	time.Sleep(2 * time.Second) // real time: the late connection must have come up before we can show nothing was sent on it
	if _, starts, _, _ := later.stats(); starts != 0 {
		t.Fatalf("%d acquire bytes reached the server after D", starts)
	}
}

func TestUnavailableWhenNoSessionCouldSendTheRequest(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	p := newProxy(t, server(t).addr)
	p.refuse(true)
	c := via(t, p, Options{TransportDeadline: time.Second})
	start := time.Now()
	if _, err := c.Acquire(context.Background(), key, 2*time.Second, 5*time.Second); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("want ErrUnavailable, got %v", err)
	}
	within(t, "Unavailable at D", time.Since(start), 1900*time.Millisecond, 3*time.Second)
	start = time.Now()
	if _, err := c.Acquire(context.Background(), key, 0, 5*time.Second); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("want ErrUnavailable, got %v", err)
	}
	within(t, "Unavailable at the transport deadline", time.Since(start), 900*time.Millisecond, 2*time.Second)
	p.refuse(false)
	mustAcquire(t, c, key, 5*time.Second, 5*time.Second).Release(context.Background())
}

// 9.10: Release and Extend are retried on other sessions until answered.
func TestReleaseAndExtendAreRetriedOnOtherSessionsUntilAnswered(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	p := newProxy(t, server(t).addr)
	c := via(t, p, Options{PoolSize: 1, ResponseGrace: 500 * time.Millisecond})
	tk := mustAcquire(t, c, key, 0, 30*time.Second)
	p.set(func(p *faultProxy) { p.cutC2S = 10 + 4 }) // new sessions: the Ping passes, the next request is cut
	p.closeAll()
	extended := make(chan error, 1)
	go func() { extended <- tk.Extend(context.Background(), 40*time.Second) }()
	eventually(t, 5*time.Second, "three sessions tried", func() bool { a, _, _, _ := p.stats(); return a >= 3 })
	select {
	case err := <-extended:
		t.Fatalf("extend ended while no session could carry it: %v", err)
	default:
	}
	p.set(func(p *faultProxy) { p.cutC2S = -1 })
	if err := <-extended; err != nil {
		t.Fatalf("extend: %v", err)
	}
	if tk.Remaining() < 35*time.Second {
		t.Fatalf("remaining %v after a 40 s extend", tk.Remaining())
	}

	// a Release whose answer is lost is retried; the retry finds the token released already
	p.set(func(p *faultProxy) { p.cutS2C = 10 })
	p.closeAll()
	released := make(chan error, 1)
	go func() { released <- tk.Release(context.Background()) }()
	eventually(t, 5*time.Second, "a release at the server", func() bool { _, _, _, r := p.stats(); return len(r) >= 1 })
	p.set(func(p *faultProxy) { p.cutS2C = -1 })
	if err := <-released; err != nil && !errors.Is(err, ErrNotHeld) {
		t.Fatalf("release: want nil or ErrNotHeld, got %v", err)
	}
	assertFreeSoon(t, direct(t), key)
}

// Pipelining: answers are correlated by owner, out of order, on one session.
func TestPipelinedAnswersAreCorrelatedOutOfOrder(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	d := direct(t)
	held := mustAcquire(t, d, key, 0, 60*time.Second)
	p := newProxy(t, server(t).addr)
	c := via(t, p, Options{PoolSize: 1})
	queued := make(chan *Ticket, 1)
	go func() {
		tk, err := c.Acquire(context.Background(), key, 20*time.Second, 5*time.Second)
		if err != nil {
			t.Errorf("queued: %v", err)
		}
		queued <- tk
	}()
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		k := key + "-" + string(rune('A'+i))
		go func() {
			defer wg.Done()
			tk, err := c.Acquire(context.Background(), k, 0, 5*time.Second)
			if err != nil {
				t.Errorf("immediate %s: %v", k, err)
				return
			}
			tk.Release(context.Background())
		}()
	}
	wg.Wait()
	select {
	case <-queued:
		t.Fatal("the queued acquire ended while the key was held")
	default:
	}
	held.Release(context.Background())
	tk := <-queued
	if tk == nil || tk.Token() <= held.Token() {
		t.Fatalf("queued grant: %v", tk)
	}
	tk.Release(context.Background())
	if a, _, _, _ := p.stats(); a != 1 {
		t.Fatalf("want one connection, got %d", a)
	}
}

// A session closed by the server (X 4, a key longer than max-key-bytes): every unanswered
// Acquire pipelined on it is Indeterminate; the client carries on with a new session.
func TestASessionClosedByTheServerMakesItsAcquiresIndeterminate(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	held := mustAcquire(t, direct(t), key, 0, 60*time.Second)
	p := newProxy(t, server(t).addr)
	c := via(t, p, Options{PoolSize: 1})
	errc := make(chan error, 1)
	go func() {
		_, err := c.Acquire(context.Background(), key, 30*time.Second, 5*time.Second)
		errc <- err
	}()
	eventually(t, 5*time.Second, "the queued acquire at the server", func() bool { _, _, s, _ := p.stats(); return len(s) == 1 })
	_, err := c.Acquire(context.Background(), strings.Repeat("k", 600), 0, 5*time.Second)
	var serr *ServerError
	if !errors.Is(err, ErrIndeterminate) || !errors.As(err, &serr) || serr.Code != 4 {
		t.Fatalf("the too-long key: want Indeterminate with server error 4, got %v", err)
	}
	if err := <-errc; !errors.Is(err, ErrIndeterminate) {
		t.Fatalf("the queued acquire on the closed session: want ErrIndeterminate, got %v", err)
	}
	held.Release(context.Background())
	mustAcquire(t, c, key, 5*time.Second, 5*time.Second).Release(context.Background())
}

// A context that ends early: Unavailable before sending, Indeterminate after, and a grant that
// still comes is released by its token. On a 1.3 session (pinned here): a cancelled acquire
// there has no Withdraw; on 1.4 sessions see TestACancelledQueuedAcquireIsWithdrawnAndLeavesNoOrphan.
func TestContextCancellationIsAnEarlyDeadline(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	held := mustAcquire(t, direct(t), key, 0, 60*time.Second)
	p := newProxy(t, server(t).addr)
	c := via(t, p, Options{PoolSize: 1, ProtocolRevision: Revision13})
	if _, err := c.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Acquire(cancelled, key, 5*time.Second, 5*time.Second); !errors.Is(err, ErrUnavailable) || !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled context: want Unavailable (context.Canceled), got %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Acquire(ctx, key, 20*time.Second, 30*time.Second)
		errc <- err
	}()
	eventually(t, 5*time.Second, "the acquire at the server", func() bool { _, _, s, _ := p.stats(); return len(s) == 1 })
	cancel()
	if err := <-errc; !errors.Is(err, ErrIndeterminate) || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled after sending: want Indeterminate (context.Canceled), got %v", err)
	}
	held.Release(context.Background()) // now the server grants the abandoned waiter
	_, _, seen, _ := p.stats()
	eventually(t, 5*time.Second, "the grant to the abandoned acquire", func() bool { _, ok := p.grantedToken(seen[0].owner); return ok })
	token, _ := p.grantedToken(seen[0].owner)
	eventually(t, 5*time.Second, "its compensating release", func() bool { return p.released(token) })
	assertFreeSoon(t, direct(t), key)

	// a context deadline shorter than wait + grace moves D so that T still comes before it
	held = mustAcquire(t, direct(t), key, 0, 60*time.Second)
	defer held.Release(context.Background())
	short, cancel2 := context.WithTimeout(context.Background(), 3500*time.Millisecond)
	defer cancel2()
	start := time.Now()
	if _, err := c.Acquire(short, key, 10*time.Second, 5*time.Second); !errors.Is(err, ErrTimedOut) {
		t.Fatalf("want ErrTimedOut before the context's deadline, got %v", err)
	}
	within(t, "T at the context's deadline less the grace", time.Since(start), 1400*time.Millisecond, 3500*time.Millisecond)
}

// Keep-alive: the lease is kept past its length, and a token released elsewhere is reported lost.
func TestKeepAliveExtendsAndReportsLoss(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	c := direct(t)
	tk := mustAcquire(t, c, key, 0, 3*time.Second)
	ka, err := tk.KeepAlive(context.Background(), 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * time.Second)
	if !tk.Valid() || ka.Err() != nil {
		t.Fatalf("after 4 s of a 3 s lease with keep-alive: valid %v, err %v", tk.Valid(), ka.Err())
	}
	if err := c.Release(context.Background(), key, tk.Token()); err != nil { // as another process would
		t.Fatal(err)
	}
	select {
	case <-ka.Lost():
		if !errors.Is(ka.Err(), ErrNotHeld) || ka.Context().Err() == nil {
			t.Fatalf("want ErrNotHeld and a cancelled context, got %v, %v", ka.Err(), ka.Context().Err())
		}
	case <-time.After(4 * time.Second):
		t.Fatal("the lost lease was not reported within 4 s")
	}

	// a server that stops answering: lost when the validity ends
	p := newProxy(t, server(t).addr)
	c2 := via(t, p, Options{PoolSize: 1, ResponseGrace: 500 * time.Millisecond})
	tk2 := mustAcquire(t, c2, key, 5*time.Second, 3*time.Second)
	ka2, _ := tk2.KeepAlive(context.Background(), 3*time.Second)
	p.set(func(p *faultProxy) { p.stallS2C = true })
	select {
	case <-ka2.Lost():
		if !errors.Is(ka2.Err(), ErrExpired) || tk2.Valid() {
			t.Fatalf("want ErrExpired after the validity, got %v (valid %v)", ka2.Err(), tk2.Valid())
		}
	case <-time.After(6 * time.Second):
		t.Fatal("the validity's end was not reported within 6 s")
	}
}

// Close: unanswered Acquires are Indeterminate and no connection stays open.
func TestCloseEndsEverything(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	held := mustAcquire(t, direct(t), key, 0, 60*time.Second)
	p := newProxy(t, server(t).addr)
	c, _ := New(Options{Servers: []string{p.addr}, PoolSize: 3})
	errs := make(chan error, 10)
	for i := 0; i < 10; i++ {
		go func() {
			_, err := c.Acquire(context.Background(), key, 30*time.Second, 5*time.Second)
			errs <- err
		}()
	}
	eventually(t, 5*time.Second, "10 acquires at the server", func() bool { _, _, s, _ := p.stats(); return len(s) == 10 })
	c.Close()
	for i := 0; i < 10; i++ {
		if err := <-errs; !errors.Is(err, ErrIndeterminate) {
			t.Fatalf("want ErrIndeterminate, got %v", err)
		}
	}
	eventually(t, 2*time.Second, "no open connection", func() bool { return p.openConnections() == 0 })
	if _, err := c.Acquire(context.Background(), key, 0, time.Second); !errors.Is(err, ErrUnavailable) || !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: want Unavailable (closed), got %v", err)
	}
	held.Release(context.Background())
	assertFreeSoon(t, direct(t), key)
}

// 9.11: no blocking call waits past its D + grace, whatever the server (does not) answer.
func TestNoBlockingCallWaitsPastItsDeadlinePlusGrace(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	held := mustAcquire(t, direct(t), key, 0, 60*time.Second)
	defer held.Release(context.Background())
	p := newProxy(t, server(t).addr)
	c := via(t, p, Options{PoolSize: 1, ResponseGrace: 800 * time.Millisecond, TransportDeadline: 1500 * time.Millisecond})
	if _, err := c.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.set(func(p *faultProxy) { p.stallS2C = true }) // no answer ever comes back
	waits := []time.Duration{0, time.Second, 2 * time.Second}
	bounds := []time.Duration{2300 * time.Millisecond, 1800 * time.Millisecond, 2800 * time.Millisecond}
	type out struct {
		i   int
		d   time.Duration
		err error
	}
	results := make(chan out, len(waits))
	for i, w := range waits {
		i, w := i, w
		go func() {
			start := time.Now()
			_, err := c.Acquire(context.Background(), key, w, 5*time.Second)
			results <- out{i, time.Since(start), err}
		}()
	}
	for range waits {
		r := <-results
		if !errors.Is(r.err, ErrIndeterminate) {
			t.Fatalf("wait %v: want ErrIndeterminate, got %v", waits[r.i], r.err)
		}
		// the first to reach its D + grace closes the shared session, which ends the others at
		// once (9.8, 9.9); none waits past its own D + grace (plus a second for a noisy machine)
		if r.d > bounds[r.i]+time.Second {
			t.Fatalf("wait %v returned after %v, past its D + grace %v", waits[r.i], r.d, bounds[r.i])
		}
	}
}

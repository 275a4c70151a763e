package leasehold

import (
	"context"
	"errors"
	"testing"
	"time"
)

// AcquireShared (PROTOCOL.md section 13) against the real server: read locks, the write lock
// beside them, semaphores, the L answer, keep-alive, and section 9's rules under faults.

func mustAcquireShared(t testing.TB, c *Client, key string, limit int, wait, lease time.Duration) *Ticket {
	t.Helper()
	tk, err := c.AcquireShared(context.Background(), key, limit, wait, lease)
	if err != nil {
		t.Fatalf("acquire shared %s (limit %d): %v", key, limit, err)
	}
	return tk
}

func TestAReadLockIsHeldByTwoAtOnceAndKeepsTheWriterOut(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	c := direct(t)
	ctx := context.Background()
	r1 := mustAcquireShared(t, c, key, 0, 0, 10*time.Second)
	r2 := mustAcquireShared(t, c, key, 0, 0, 10*time.Second)
	if r2.Token() <= r1.Token() || !r1.Valid() || !r2.Valid() {
		t.Fatalf("two readers: tokens %d, %d (must grow), valid %v %v", r1.Token(), r2.Token(), r1.Valid(), r2.Valid())
	}
	for _, r := range []*Ticket{r1, r2} {
		if ok, err := r.Check(ctx); !ok || err != nil {
			t.Fatalf("check of reader %d: %v %v", r.Token(), ok, err)
		}
	}
	if _, err := c.Acquire(ctx, key, 0, 5*time.Second); !errors.Is(err, ErrTimedOut) {
		t.Fatalf("a writer at wait 0 beside two readers: want ErrTimedOut, got %v", err)
	}
	if err := r1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := r2.Check(ctx); !ok || err != nil { // a release touches its own grant only
		t.Fatalf("the other reader after one release: %v %v", ok, err)
	}
	if ok, err := c.Check(ctx, key, r1.Token()); ok || err != nil {
		t.Fatalf("the released reader's token: %v %v", ok, err)
	}
	if err := r2.Release(ctx); err != nil {
		t.Fatal(err)
	}
	w := mustAcquire(t, c, key, 0, 5*time.Second)
	if w.Token() <= r2.Token() {
		t.Fatalf("the writer's token %d must be above the readers' %d", w.Token(), r2.Token())
	}
	w.Release(ctx)
}

// A writer queued behind readers waits for every one of them, and no reader overtakes it.
func TestAWriterWaitsForTheReadersAndNoReaderOvertakesIt(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	c := direct(t)
	ctx := context.Background()
	r1 := mustAcquireShared(t, c, key, 0, 0, 30*time.Second)
	r2 := mustAcquireShared(t, c, key, 0, 0, 30*time.Second)
	writer := make(chan *Ticket, 1)
	writerErr := make(chan error, 1)
	go func() {
		tk, err := c.Acquire(ctx, key, 20*time.Second, 10*time.Second)
		if err != nil {
			writerErr <- err
			return
		}
		writer <- tk
	}()
	// a reader at wait 0 is granted until the writer queues, then refused (13.3: no barging)
	eventually(t, 10*time.Second, "a reader at wait 0 refused because the writer queued", func() bool {
		tk, err := c.AcquireShared(ctx, key, 0, 0, 5*time.Second)
		if err == nil {
			tk.Release(ctx)
			return false
		}
		if !errors.Is(err, ErrTimedOut) {
			t.Fatalf("a reader at wait 0: want a grant or ErrTimedOut, got %v", err)
		}
		return true
	})
	if err := r1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AcquireShared(ctx, key, 0, 0, 5*time.Second); !errors.Is(err, ErrTimedOut) {
		t.Fatalf("a reader while the writer waits for the last reader: want ErrTimedOut, got %v", err)
	}
	select {
	case tk := <-writer:
		t.Fatalf("the writer was granted (token %d) while reader %d still held", tk.Token(), r2.Token())
	case err := <-writerErr:
		t.Fatalf("the writer: %v", err)
	default:
	}
	if err := r2.Release(ctx); err != nil {
		t.Fatal(err)
	}
	var w *Ticket
	select {
	case w = <-writer:
	case err := <-writerErr:
		t.Fatalf("the writer: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("the writer was not granted within 10 s of the last reader's release")
	}
	if w.Token() <= r2.Token() {
		t.Fatalf("the writer's token %d must be above the readers' %d", w.Token(), r2.Token())
	}
	if _, err := c.AcquireShared(ctx, key, 0, 0, 5*time.Second); !errors.Is(err, ErrTimedOut) {
		t.Fatalf("a reader while the writer holds: want ErrTimedOut, got %v", err)
	}
	w.Release(ctx)
	mustAcquireShared(t, c, key, 0, 0, 5*time.Second).Release(ctx)
}

func TestASemaphoreOfTwoRefusesAThirdAtWaitZeroAndGrantsItWhenAPermitIsFreed(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	c := direct(t)
	ctx := context.Background()
	p1 := mustAcquireShared(t, c, key, 2, 0, 30*time.Second)
	p2 := mustAcquireShared(t, c, key, 2, 0, 30*time.Second)
	if _, err := c.AcquireShared(ctx, key, 2, 0, 5*time.Second); !errors.Is(err, ErrTimedOut) {
		t.Fatalf("a third permit of 2 at wait 0: want ErrTimedOut, got %v", err)
	}
	// the third waits on a session of its own; a Ping behind it on that session is answered
	// only after the server has queued it (a session's requests are handled in order)
	p := newProxy(t, server(t).addr)
	c3 := via(t, p, Options{PoolSize: 1})
	third := make(chan error, 1)
	var p3 *Ticket
	go func() {
		tk, err := c3.AcquireShared(ctx, key, 2, 20*time.Second, 5*time.Second)
		p3 = tk
		third <- err
	}()
	eventually(t, 10*time.Second, "the third permit's S at the proxy", func() bool { _, _, s, _ := p.stats(); return len(s) == 1 })
	if _, err := c3.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AcquireShared(ctx, key, 2, 0, 5*time.Second); !errors.Is(err, ErrTimedOut) {
		t.Fatalf("a fourth at wait 0 behind the queued third: want ErrTimedOut, got %v", err)
	}
	if err := p1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-third:
		if err != nil {
			t.Fatalf("the queued third permit: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the queued third permit was not granted within 10 s of a release")
	}
	if p3.Token() <= p2.Token() {
		t.Fatalf("tokens must grow: %d then %d", p2.Token(), p3.Token())
	}
	p2.Release(ctx)
	p3.Release(ctx)
}

// L is its own definitive outcome naming both limits; the session stays open (13.1, 13.2).
func TestALimitMismatchIsDefinitiveAndNamesBothLimits(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	p := newProxy(t, server(t).addr)
	c := via(t, p, Options{PoolSize: 1})
	ctx := context.Background()
	held := mustAcquireShared(t, c, key, 2, 0, 30*time.Second)
	defer held.Release(ctx)
	for _, asked := range []int{3, 0} {
		start := time.Now()
		_, err := c.AcquireShared(ctx, key, asked, 10*time.Second, 5*time.Second)
		if !errors.Is(err, ErrLimitMismatch) || errors.Is(err, ErrIndeterminate) {
			t.Fatalf("limit %d on a semaphore of 2: want ErrLimitMismatch, got %v", asked, err)
		}
		var lm *LimitMismatchError
		if !errors.As(err, &lm) || lm.Requested != asked || lm.KeyLimit != 2 {
			t.Fatalf("limit %d: want a *LimitMismatchError{%d, 2}, got %#v (%v)", asked, asked, lm, err)
		}
		var e *Error
		if !errors.As(err, &e) || e.Op != "acquire shared" || e.Key != key {
			t.Fatalf("the error's op and key: %#v", e)
		}
		within(t, "the L answer (at once, not after the 10 s wait)", time.Since(start), 0, 3*time.Second)
	}
	if ok, err := held.Check(ctx); !ok || err != nil {
		t.Fatalf("the holder after the mismatches: %v %v", ok, err)
	}
	if accepted, _, seen, _ := p.stats(); accepted != 1 || len(seen) != 3 {
		t.Fatalf("want the one session kept open and 3 shared acquires sent once each, got %d sessions, %v", accepted, seen)
	}
	if _, _, seen, _ := p.stats(); !seen[1].shared || seen[1].limit != 3 || seen[2].limit != 0 {
		t.Fatalf("the S frames sent: %v", seen)
	}
}

func TestSharedLimitsOutsideTheWireAreRejectedBeforeSending(t *testing.T) {
	c := newClient(t, Options{Servers: []string{"127.0.0.1:1"}})
	for _, limit := range []int{-1, 65536} {
		if _, err := c.AcquireShared(context.Background(), "k", limit, 0, time.Second); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("limit %d: want ErrInvalidArgument, got %v", limit, err)
		}
	}
	if _, err := c.AcquireShared(context.Background(), "k", 1, 0, 0); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("lease 0: want ErrInvalidArgument, got %v", err)
	}
}

// A limit above the server's max-shared-holders-per-key (default 1024) is an X 3: the session
// is closed, so the outcome is Indeterminate (9.9) with the server's error as its cause.
func TestALimitAboveTheServersMaximumIsAnX3(t *testing.T) {
	t.Parallel()
	c := direct(t)
	_, err := c.AcquireShared(context.Background(), keyOf(t), 65535, 0, 5*time.Second)
	var se *ServerError
	if !errors.Is(err, ErrIndeterminate) || !errors.As(err, &se) || se.Code != 3 {
		t.Fatalf("want ErrIndeterminate caused by X 3, got %v", err)
	}
	if _, err := c.Ping(context.Background()); err != nil { // the client opens a new session
		t.Fatal(err)
	}
}

func TestKeepAliveExtendsASharedGrantAndReportsItsLoss(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	c := direct(t)
	ctx := context.Background()
	other := mustAcquireShared(t, c, key, 0, 0, 30*time.Second)
	defer other.Release(ctx)
	tk := mustAcquireShared(t, c, key, 0, 0, 3*time.Second)
	ka, err := tk.KeepAlive(ctx, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * time.Second) // past the first lease: only the keep-alive's Extends hold it
	if ok, err := tk.Check(ctx); !ok || err != nil || ka.Err() != nil {
		t.Fatalf("after 4 s of a 3 s shared lease with keep-alive: check %v %v, keep-alive %v", ok, err, ka.Err())
	}
	if err := c.Release(ctx, key, tk.Token()); err != nil { // as another process would
		t.Fatal(err)
	}
	select {
	case <-ka.Lost():
		if !errors.Is(ka.Err(), ErrNotHeld) || ka.Context().Err() == nil {
			t.Fatalf("want ErrNotHeld and a cancelled context, got %v, %v", ka.Err(), ka.Context().Err())
		}
	case <-time.After(4 * time.Second):
		t.Fatal("the lost shared lease was not reported within 4 s")
	}
	if ok, err := other.Check(ctx); !ok || err != nil {
		t.Fatalf("the other reader after this one's loss: %v %v", ok, err)
	}
}

// 9.7 for a shared grant: reaching the gate after D, it is released by its token (the permit
// comes back at once, not at the 30 s lease's end) and the outcome is Indeterminate.
func TestASharedGrantArrivingAfterTheDeadlineIsReleasedAndIndeterminate(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	d := direct(t)
	held := mustAcquireShared(t, d, key, 1, 0, 60*time.Second)
	p := newProxy(t, server(t).addr)
	c := via(t, p, Options{PoolSize: 1})
	if _, err := c.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.set(func(p *faultProxy) { p.delayS2C = 1200 * time.Millisecond })
	start := time.Now()
	errc := make(chan error, 1)
	go func() {
		_, err := c.AcquireShared(context.Background(), key, 1, 2*time.Second, 30*time.Second)
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
	if len(seen) != 1 || !seen[0].shared || seen[0].limit != 1 {
		t.Fatalf("want exactly one S with limit 1 sent, got %v", seen)
	}
	token, ok := p.grantedToken(seen[0].owner)
	if !ok {
		t.Fatal("the server did not grant")
	}
	eventually(t, 8*time.Second, "the compensating release of the late shared grant's token", func() bool { return p.released(token) })
	eventually(t, 8*time.Second, "the permit free again", func() bool {
		tk, err := d.AcquireShared(context.Background(), key, 1, 0, 5*time.Second)
		if err != nil {
			return false
		}
		tk.Release(context.Background())
		return true
	})
	within(t, "freed long before the 30 s lease", time.Since(start), 0, 15*time.Second)
}

// A lost answer: the shared grant is Indeterminate, never resent, and its permit ends with its lease.
func TestASharedGrantWhoseAnswerIsLostEndsWithItsLease(t *testing.T) {
	t.Parallel()
	key := keyOf(t)
	p := newProxy(t, server(t).addr)
	p.set(func(p *faultProxy) { p.cutS2C = 10 + 5 }) // the Pong passes, the A is cut after 5 bytes
	c := via(t, p, Options{PoolSize: 1})
	start := time.Now()
	_, err := c.AcquireShared(context.Background(), key, 1, 5*time.Second, 2*time.Second)
	if !errors.Is(err, ErrIndeterminate) {
		t.Fatalf("want ErrIndeterminate, got %v", err)
	}
	within(t, "Indeterminate at once", time.Since(start), 0, 2500*time.Millisecond)
	_, _, seen, _ := p.stats()
	if len(seen) != 1 || !seen[0].shared {
		t.Fatalf("want exactly one S sent (never a resend), got %v", seen)
	}
	if _, ok := p.grantedToken(seen[0].owner); !ok {
		t.Fatal("the server did not grant")
	}
	d := direct(t)
	if _, err := d.AcquireShared(context.Background(), key, 1, 0, 5*time.Second); !errors.Is(err, ErrTimedOut) {
		t.Fatalf("the unobserved grant must still hold the one permit: %v", err)
	}
	after := mustAcquireShared(t, d, key, 1, 5*time.Second, 5*time.Second)
	within(t, "the permit free at the 2 s lease's end", time.Since(start), 1900*time.Millisecond, 5*time.Second)
	after.Release(context.Background())
	if _, _, seen, _ := p.stats(); len(seen) != 1 {
		t.Fatalf("resent: %v", seen)
	}
}

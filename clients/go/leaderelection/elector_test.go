package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"leasehold.dev/leasehold"
)

// Candidates and observers against the real server: graceful handovers, a cancelled Run, a
// kept lease, a leader cut off by a partition. Every candidate records its terms; checkTerms
// holds the promises: terms strictly increase, and each term started only after the one before
// it had stopped on its candidate's side (OnStoppedLeading returned: no two terms valid at once).

type termRecord struct {
	term     uint64
	identity string
	started  time.Time // OnStartedLeading was called
	ctxDone  time.Time // its context was cancelled (zero while it lasts)
	stopped  time.Time // OnStoppedLeading was called (zero while it lasts)
}

type history struct {
	mu     sync.Mutex
	terms  []*termRecord
	starts chan *termRecord
}

func newHistory() *history { return &history{starts: make(chan *termRecord, 1000)} }

type candidate struct {
	name string
	le   *LeaderElector
	stop context.CancelFunc
	done chan error

	mu      sync.Mutex
	current *termRecord
	leaders []string // OnNewLeader's identities
}

func (h *history) candidate(t *testing.T, client *leasehold.Client, key, name string, lease time.Duration, keep bool) *candidate {
	c := &candidate{name: name, done: make(chan error, 1)}
	le, err := NewLeaderElector(Config{Client: client, Key: key, Identity: name, LeaseDuration: lease, KeepLeaseOnCancel: keep,
		Callbacks: LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				term, ok := TermFrom(ctx)
				if !ok {
					t.Errorf("%s: no term in OnStartedLeading's context", name)
				}
				rec := &termRecord{term: term, identity: name, started: time.Now()}
				h.mu.Lock()
				h.terms = append(h.terms, rec)
				c.current = rec
				h.mu.Unlock()
				h.starts <- rec
				<-ctx.Done()
				h.mu.Lock()
				rec.ctxDone = time.Now()
				h.mu.Unlock()
			},
			OnStoppedLeading: func() {
				h.mu.Lock()
				c.current.stopped = time.Now()
				h.mu.Unlock()
			},
			OnNewLeader: func(identity string) {
				c.mu.Lock()
				c.leaders = append(c.leaders, identity)
				c.mu.Unlock()
			},
		}})
	if err != nil {
		t.Fatal(err)
	}
	c.le = le
	ctx, stop := context.WithCancel(context.Background())
	c.stop = stop
	go func() { c.done <- le.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		select {
		case <-c.done:
		case <-time.After(15 * time.Second):
			t.Errorf("%s: Run did not return within 15 s of its context's end", name)
		}
	})
	return c
}

// nextStart waits for the next term to start anywhere.
func (h *history) nextStart(t *testing.T, within time.Duration) *termRecord {
	t.Helper()
	select {
	case rec := <-h.starts:
		return rec
	case <-time.After(within):
		t.Fatalf("no term started within %v", within)
		return nil
	}
}

// checkTerms: strictly increasing terms, each started after the previous one had stopped.
func (h *history) checkTerms(t *testing.T) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := 1; i < len(h.terms); i++ {
		prev, next := h.terms[i-1], h.terms[i]
		if next.term <= prev.term {
			t.Errorf("term %d (%s) started after term %d (%s)", next.term, next.identity, prev.term, prev.identity)
		}
		if prev.stopped.IsZero() || !next.started.After(prev.stopped) || prev.ctxDone.After(prev.stopped) {
			t.Errorf("overlap: term %d (%s) started at %v, term %d (%s) stopped at %v (context done %v)",
				next.term, next.identity, next.started, prev.term, prev.identity, prev.stopped, prev.ctxDone)
		}
	}
}

func byName(cs []*candidate, name string) *candidate {
	for _, c := range cs {
		if c.name == name {
			return c
		}
	}
	return nil
}

func percentile(ds []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(p*float64(len(s)-1))]
}

// 25 resigns, each handed to the next candidate in one round trip; an observer is told each term.
func TestGracefulHandoversAreTold(t *testing.T) {
	addr := startServer(t)
	key := keyOf("election/handovers")
	observer := newClient(t, addr)
	obsCtx, stopObs := context.WithCancel(context.Background())
	defer stopObs()
	events, err := Observe(obsCtx, observer, key)
	if err != nil {
		t.Fatal(err)
	}
	var seenMu sync.Mutex
	var seen []LeaderEvent
	go func() {
		for ev := range events {
			seenMu.Lock()
			seen = append(seen, ev)
			seenMu.Unlock()
		}
	}()
	h := newHistory()
	var cs []*candidate
	for _, name := range []string{"a", "b", "c"} {
		cs = append(cs, h.candidate(t, newClient(t, addr), key, name, 5*time.Second, false))
	}
	const handovers = 25
	var latencies []time.Duration
	var resignedAt time.Time
	var last *termRecord
	for i := 0; i <= handovers; i++ {
		rec := h.nextStart(t, 10*time.Second)
		if i > 0 {
			latencies = append(latencies, rec.started.Sub(resignedAt))
		}
		last = rec
		// The observer reads each term before the next resign: a reader that falls behind may
		// miss a term by design (one slot, the newest wins), so a term missing here was never sent.
		eventually(t, 5*time.Second, "the observer to be told the term", func() bool {
			seenMu.Lock()
			defer seenMu.Unlock()
			return len(seen) > 0 && seen[len(seen)-1].Term == rec.term
		})
		if i == handovers {
			break
		}
		leader := byName(cs, rec.identity)
		if !leader.le.IsLeader() {
			t.Fatalf("%s started term %d but IsLeader is false", rec.identity, rec.term)
		}
		resignedAt = time.Now()
		if !leader.le.Resign() {
			t.Fatalf("%s could not resign term %d", rec.identity, rec.term)
		}
	}
	h.checkTerms(t)
	t.Logf("%d handovers (each told to the observer before the next), Resign to the next OnStartedLeading: p50 %v, p90 %v, max %v", handovers,
		percentile(latencies, 0.5), percentile(latencies, 0.9), percentile(latencies, 1))

	// The observer was told each started term, in order, and the candidates know the leader.
	seenMu.Lock()
	defer seenMu.Unlock()
	told := map[uint64]string{}
	var prev uint64
	for _, ev := range seen {
		if ev.Kind == NewLeader {
			if ev.Term <= prev {
				t.Errorf("the observer was told term %d after term %d", ev.Term, prev)
			}
			prev = ev.Term
			told[ev.Term] = ev.Identity
		}
	}
	h.mu.Lock()
	for _, rec := range h.terms {
		if told[rec.term] != rec.identity {
			t.Errorf("term %d of %s: the observer was told %q; it saw %+v", rec.term, rec.identity, told[rec.term], seen)
		}
	}
	h.mu.Unlock()
	for _, c := range cs {
		c := c
		eventually(t, 5*time.Second, c.name+" to see the leader", func() bool { return c.le.GetLeader() == last.identity })
		c.mu.Lock()
		if len(c.leaders) == 0 || c.leaders[len(c.leaders)-1] != last.identity {
			t.Errorf("%s: OnNewLeader was last told %v, want %s", c.name, c.leaders, last.identity)
		}
		c.mu.Unlock()
	}
}

// A cancelled Run releases: the next candidate leads within a round trip, not the lease.
func TestACancelledRunHandsOverAtOnce(t *testing.T) {
	addr := startServer(t)
	key := keyOf("election/cancel")
	h := newHistory()
	a := h.candidate(t, newClient(t, addr), key, "a", 15*time.Second, false)
	first := h.nextStart(t, 10*time.Second)
	h.candidate(t, newClient(t, addr), key, "b", 15*time.Second, false)
	time.Sleep(300 * time.Millisecond) // b queues behind a
	cancelledAt := time.Now()
	a.stop()
	next := h.nextStart(t, 10*time.Second)
	took := next.started.Sub(cancelledAt)
	if first.identity != "a" || next.identity != "b" || took > 2*time.Second {
		t.Fatalf("after a's cancel: %s led term %d %v later (lease 15 s)", next.identity, next.term, took)
	}
	if err := <-a.done; !errors.Is(err, context.Canceled) {
		t.Fatalf("a's Run: want context.Canceled, got %v", err)
	}
	a.done <- nil // for the clean-up
	h.checkTerms(t)
	t.Logf("cancel of the leader's Run to the next OnStartedLeading: %v", took)
}

// KeepLeaseOnCancel: the cancelled leader's grant ends with its lease; only then the next leads.
func TestKeepLeaseOnCancelKeepsTheGrantUntilItsLeaseEnds(t *testing.T) {
	addr := startServer(t)
	key := keyOf("election/keep")
	const lease = 2 * time.Second
	h := newHistory()
	a := h.candidate(t, newClient(t, addr), key, "a", lease, true)
	h.nextStart(t, 10*time.Second)
	h.candidate(t, newClient(t, addr), key, "b", lease, true)
	time.Sleep(300 * time.Millisecond) // b queues behind a
	cancelledAt := time.Now()
	a.stop()
	next := h.nextStart(t, 10*time.Second)
	took := next.started.Sub(cancelledAt)
	// The keep-alive extends every lease/3, so at least 2/3 of the lease is left on the server.
	if next.identity != "b" || took < lease/2 || took > lease+3*time.Second {
		t.Fatalf("after a's cancel with KeepLeaseOnCancel: %s led %v later, want between %v and %v", next.identity, took, lease/2, lease+3*time.Second)
	}
	h.checkTerms(t)
	t.Logf("cancel with KeepLeaseOnCancel to the next OnStartedLeading: %v (lease %v)", took, lease)
}

// A leader cut off from the server stops (its term ends at its validity minus the safety)
// before the server lets the next candidate's term start.
func TestALeaderCutOffStopsBeforeTheNextTermStarts(t *testing.T) {
	addr := startServer(t)
	key := keyOf("election/partition")
	const lease = 2 * time.Second
	proxy := newPartitionProxy(t, addr)
	h := newHistory()
	a := h.candidate(t, newClient(t, proxy.addr()), key, "a", lease, false)
	first := h.nextStart(t, 10*time.Second)
	h.candidate(t, newClient(t, addr), key, "b", lease, false)
	h.candidate(t, newClient(t, addr), key, "c", lease, false)
	time.Sleep(500 * time.Millisecond) // b and c queue behind a; a's keep-alive runs
	cutAt := time.Now()
	proxy.cut.Store(true)
	next := h.nextStart(t, lease+10*time.Second)
	if next.identity == "a" || next.term <= first.term {
		t.Fatalf("after the cut: term %d of %s followed term %d of a", next.term, next.identity, first.term)
	}
	if a.le.IsLeader() {
		t.Fatal("a still says it leads after the next term started")
	}
	h.checkTerms(t)
	h.mu.Lock()
	t.Logf("a cut off: it stopped %v after the cut, %s led %v after the cut (lease %v)",
		first.stopped.Sub(cutAt), next.identity, next.started.Sub(cutAt), lease)
	h.mu.Unlock()
}

var keys atomic.Int64

// keyOf makes a test's key unique in the server the package's tests share (also under -count).
func keyOf(name string) string { return fmt.Sprintf("%s/%d", name, keys.Add(1)) }

func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	for start := time.Now(); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > within {
			t.Fatalf("waited %v for %s", within, what)
		}
	}
}

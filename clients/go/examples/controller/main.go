// Command controller is a Kubernetes-style controller that runs its reconcile loop only while
// it holds a Leasehold lock: one active replica out of many, fenced. It passes the lock's
// fencing token with every write, so the store refuses a replica that was paused (GC, a
// stopped node, a network partition) past its lease, and it stops the loop the moment the
// lease is lost, then competes for the lock again.
//
//	go run ./examples/controller -servers h1:7420,h2:7420,h3:7420 -lock controllers/orders
//
// The store here is in memory (FencedStore); a real controller writes to something that keeps
// the highest token it has seen (a database row, an object's annotation checked in a
// transaction) or asks Leasehold with Client.Check.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"leasehold.dev/leasehold"
)

// FencedStore is the guarded resource: it accepts a write only with a token at least as high
// as every token it has seen (PROTOCOL.md 9.6).
type FencedStore struct {
	mu      sync.Mutex
	highest uint64
	state   map[string]string
}

// ErrStaleToken is a write from a holder that is no longer the latest.
var ErrStaleToken = errors.New("stale fencing token")

// Put writes key = value under token.
func (s *FencedStore) Put(token uint64, key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if token < s.highest {
		return fmt.Errorf("%w: %d < %d", ErrStaleToken, token, s.highest)
	}
	s.highest = token
	if s.state == nil {
		s.state = map[string]string{}
	}
	s.state[key] = value
	return nil
}

func main() {
	servers := flag.String("servers", "127.0.0.1:7420", "Leasehold servers, comma-separated (every node of a cluster)")
	lock := flag.String("lock", "controllers/orders", "the lock that elects the active replica")
	lease := flag.Duration("lease", 15*time.Second, "lease, whole seconds; the keep-alive extends it every lease/3")
	period := flag.Duration("period", 2*time.Second, "reconcile period")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	client, err := leasehold.New(leasehold.Options{Servers: strings.Split(*servers, ",")})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	if err := Run(ctx, client, &FencedStore{}, *lock, *lease, *period, log.Default()); err != nil && !errors.Is(err, context.Canceled) {
		log.Fatal(err)
	}
}

// Run competes for lock until ctx ends; while it holds the lock it reconciles every period.
func Run(ctx context.Context, client *leasehold.Client, store *FencedStore, lock string, lease, period time.Duration, logger *log.Logger) error {
	for ctx.Err() == nil {
		// Wait up to 30 s in the lock's FIFO queue; a standby replica simply asks again.
		ticket, err := client.Acquire(ctx, lock, 30*time.Second, lease)
		switch {
		case errors.Is(err, leasehold.ErrTimedOut):
			continue // another replica is active
		case errors.Is(err, leasehold.ErrBusy), errors.Is(err, leasehold.ErrUnavailable), errors.Is(err, leasehold.ErrIndeterminate):
			// Indeterminate: never act on a guess; a grant we did not see ends with its lease.
			logger.Printf("not leading (%v); retrying", err)
			sleep(ctx, time.Second)
			continue
		case err != nil:
			return err
		}
		logger.Printf("leading with token %d", ticket.Token())
		if err := lead(ctx, ticket, store, lease, period, logger); err != nil {
			logger.Printf("stopped leading: %v", err)
		}
	}
	return ctx.Err()
}

// lead runs the reconcile loop while the lease is kept, and releases the lock when ctx ends.
func lead(ctx context.Context, ticket *leasehold.Ticket, store *FencedStore, lease, period time.Duration, logger *log.Logger) error {
	keepAlive, err := ticket.KeepAlive(ctx, lease)
	if err != nil {
		return err
	}
	defer keepAlive.Stop()
	defer func() {
		release, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ticket.Release(release) // hand over at once rather than at the lease's end
	}()
	work := keepAlive.Context() // cancelled when the lease is lost or ctx ends
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-keepAlive.Lost():
			return keepAlive.Err() // ErrNotHeld or ErrExpired: another replica may lead now
		case <-work.Done():
			return work.Err()
		case <-tick.C:
		}
		if !ticket.Valid() { // the safe validity ended (paused, server slow): stop acting
			return errors.New("the lease's validity ended")
		}
		if err := reconcile(work, ticket.Token(), store); err != nil {
			if errors.Is(err, ErrStaleToken) {
				return err // a newer holder wrote: we are not the leader any more
			}
			logger.Printf("reconcile: %v", err)
		}
	}
}

// reconcile brings the world to the desired state; every write carries the fencing token.
func reconcile(ctx context.Context, token uint64, store *FencedStore) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return store.Put(token, "orders/replicas", fmt.Sprintf("3 (reconciled %s)", time.Now().Format(time.RFC3339)))
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

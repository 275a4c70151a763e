// Command controller is a Kubernetes-style controller that runs its reconcile loop only while
// it leads a Leasehold election (package leaderelection): one active replica out of many,
// fenced. It passes its term (the grant's fencing token) with every write, so the store refuses
// a replica that was paused (GC, a stopped node, a network partition) past its term; it stops
// the loop the moment its term ends, then campaigns again. On SIGTERM it resigns, and the next
// replica leads one round trip later.
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
	"leasehold.dev/leasehold/leaderelection"
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
	lock := flag.String("lock", "controllers/orders", "the election's key")
	identity := flag.String("identity", hostname(), "this replica's name, shown to the others (in Kubernetes: the pod name)")
	lease := flag.Duration("lease", 15*time.Second, "each term's lease, whole seconds; the keep-alive extends it every lease/3")
	period := flag.Duration("period", 2*time.Second, "reconcile period")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	client, err := leasehold.New(leasehold.Options{Servers: strings.Split(*servers, ",")})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	if err := Run(ctx, client, &FencedStore{}, *lock, *identity, *lease, *period, log.Default()); err != nil && !errors.Is(err, context.Canceled) {
		log.Fatal(err)
	}
}

func hostname() string {
	name, err := os.Hostname()
	if err != nil {
		return fmt.Sprintf("controller-%d", os.Getpid())
	}
	return name
}

// Run campaigns in the election on lock until ctx ends; while it leads it reconciles every
// period. When ctx ends it resigns (the grant is released), so another replica leads at once.
func Run(ctx context.Context, client *leasehold.Client, store *FencedStore, lock, identity string, lease, period time.Duration, logger *log.Logger) error {
	var elector *leaderelection.LeaderElector
	elector, err := leaderelection.NewLeaderElector(leaderelection.Config{
		Client:        client,
		Key:           lock,
		Identity:      identity,
		LeaseDuration: lease,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				term, _ := leaderelection.TermFrom(ctx)
				logger.Printf("leading with token %d", term)
				if err := lead(ctx, term, store, period, logger); errors.Is(err, ErrStaleToken) {
					logger.Printf("%v: resigning", err)
					elector.Resign() // a newer term wrote: ours is over, hand the key on
				}
			},
			OnStoppedLeading: func() { logger.Printf("stopped leading") },
			OnNewLeader:      func(leader string) { logger.Printf("the leader is %s", leader) },
		},
	})
	if err != nil {
		return err
	}
	return elector.Run(ctx)
}

// lead runs the reconcile loop until the term's context is done (the term ended: validity,
// lost keep-alive, resign, shutdown) or the store refuses the term.
func lead(ctx context.Context, term uint64, store *FencedStore, period time.Duration, logger *log.Logger) error {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		if err := reconcile(ctx, term, store); err != nil {
			if errors.Is(err, ErrStaleToken) {
				return err
			}
			logger.Printf("reconcile: %v", err)
		}
	}
}

// reconcile brings the world to the desired state; every write carries the term.
func reconcile(ctx context.Context, term uint64, store *FencedStore) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return store.Put(term, "orders/replicas", fmt.Sprintf("3 (reconciled %s)", time.Now().Format(time.RFC3339)))
}

// Package leaderelection runs code on exactly one of many candidates and tells everyone who
// leads, on a Leasehold key (docs/go.md, "Leader election"). It is shaped like client-go's
// leaderelection package, with two differences that matter: the leader's term is the grant's
// fencing token (TermFrom), so a resource can refuse a leader paused past its term, and nobody
// polls: a candidate waits in the key's FIFO queue and observers are pushed every change.
//
// A campaign is an exclusive acquire carrying the candidate's identity as the grant's value,
// with a long wait (CampaignWait), queued again at once when that wait ends. A grant starts a
// term: a keep-alive (an Extend every LeaseDuration/3) and OnStartedLeading. The term ends at the
// first of the ticket's validity minus a safety (LeaseDuration/10), a lost keep-alive, Resign and
// the end of Run's context; then OnStoppedLeading (once, after OnStartedLeading returned) and
// the release, so the next candidate leads one round trip later.
//
// It needs a revision 1.4 server (values and observations).
package leaderelection

import (
	"context"
	"errors"
	"fmt"
	"time"

	"leasehold.dev/leasehold"
)

// LeaderCallbacks are the calls a LeaderElector makes.
type LeaderCallbacks struct {
	// OnStartedLeading runs in its own goroutine when a term starts, with a context that carries
	// the term (TermFrom) and is cancelled when the term ends on this side: at the ticket's
	// validity minus the safety, when the keep-alive is lost, on Resign, or when Run's context
	// ends. Pass the term with every write; return when the context is done. Required.
	OnStartedLeading func(ctx context.Context)
	// OnStoppedLeading is called once per started term, after OnStartedLeading returned and
	// before the grant is released. Optional. Unlike client-go it is not called when Run returns
	// without having led.
	OnStoppedLeading func()
	// OnNewLeader is called once per term, for every leader including this one, in term order,
	// from the observation of the key (a slow call can make the next one skip a term: only the
	// latest leader is guaranteed). Optional.
	OnNewLeader func(identity string)
}

// Config configures a LeaderElector.
type Config struct {
	// Client is the Leasehold client the elector acquires and observes through. Required.
	Client *leasehold.Client
	// Key is the election's key: every candidate of one election uses the same. Required.
	Key string
	// Identity names this candidate; observers see it as the leader's identity (the grant's
	// value: at most the server's leasehold.max-value-bytes, 256 by default). Required.
	Identity string
	// LeaseDuration is each term's lease, whole seconds from 1 s to 255 s. A crashed leader is
	// replaced at most this long after its last Extend. Default 15 s.
	LeaseDuration time.Duration
	// KeepLeaseOnCancel: when Run's context ends while leading, do not release the grant; the
	// next candidate then leads only when the lease has run out on the server. By default the
	// grant is released, and the next candidate leads one round trip later.
	KeepLeaseOnCancel bool
	// Callbacks are the calls the elector makes.
	Callbacks LeaderCallbacks
	// CampaignWait is how long one queued acquire waits on the server before it is queued
	// again; at most the server's leasehold.max-wait. Default 60 s.
	CampaignWait time.Duration
}

// The defaults of Config.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultCampaignWait  = 60 * time.Second
	maxIdentityBytes     = 1024 // the protocol's limit on a value (PROTOCOL.md 17)
	backoffMin           = 100 * time.Millisecond
	backoffMax           = 5 * time.Second
)

// ErrInvalidConfig is what NewLeaderElector returns for a Config it cannot run.
var ErrInvalidConfig = errors.New("leaderelection: invalid config")

func (c Config) withDefaults() (Config, error) {
	bad := func(format string, args ...any) (Config, error) {
		return c, fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
	}
	if c.Client == nil {
		return bad("Client is nil")
	}
	if c.Key == "" {
		return bad("Key is empty")
	}
	if c.Identity == "" || len(c.Identity) > maxIdentityBytes {
		return bad("Identity must be 1 to %d bytes, is %d", maxIdentityBytes, len(c.Identity))
	}
	if c.Callbacks.OnStartedLeading == nil {
		return bad("Callbacks.OnStartedLeading is nil")
	}
	if c.LeaseDuration == 0 {
		c.LeaseDuration = DefaultLeaseDuration
	}
	if c.LeaseDuration%time.Second != 0 || c.LeaseDuration < time.Second || c.LeaseDuration > 255*time.Second {
		return bad("LeaseDuration %v must be whole seconds from 1s to 255s", c.LeaseDuration)
	}
	if c.CampaignWait == 0 {
		c.CampaignWait = DefaultCampaignWait
	}
	if c.CampaignWait < time.Millisecond || c.CampaignWait > time.Hour {
		return bad("CampaignWait %v must be from 1ms to 1h", c.CampaignWait)
	}
	return c, nil
}

// safety is how long before the ticket's validity a term ends on the candidate's side.
func (c Config) safety() time.Duration { return c.LeaseDuration / 10 }

type termKey struct{}

// TermFrom returns the term carried by the context given to OnStartedLeading (or one derived
// from it): the grant's fencing token, higher than every earlier term of the key. Pass it to
// the guarded resource with every write and let the resource refuse a term lower than the
// highest it has seen.
func TermFrom(ctx context.Context) (uint64, bool) {
	term, ok := ctx.Value(termKey{}).(uint64)
	return term, ok
}

package leaderelection

import (
	"context"
	"errors"
	"testing"
	"time"

	"leasehold.dev/leasehold"
)

// Without a server: what NewLeaderElector refuses, and how key events become leader events.

func TestNewLeaderElectorRefusesAConfigItCannotRun(t *testing.T) {
	client, err := leasehold.New(leasehold.Options{Servers: []string{"127.0.0.1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ok := Config{Client: client, Key: "k", Identity: "me", Callbacks: LeaderCallbacks{OnStartedLeading: func(context.Context) {}}}
	for name, mend := range map[string]func(*Config){
		"no client":        func(c *Config) { c.Client = nil },
		"no key":           func(c *Config) { c.Key = "" },
		"no identity":      func(c *Config) { c.Identity = "" },
		"long identity":    func(c *Config) { c.Identity = string(make([]byte, 1025)) },
		"no callback":      func(c *Config) { c.Callbacks.OnStartedLeading = nil },
		"lease in ms":      func(c *Config) { c.LeaseDuration = 1500 * time.Millisecond },
		"lease too long":   func(c *Config) { c.LeaseDuration = 256 * time.Second },
		"negative wait":    func(c *Config) { c.CampaignWait = -time.Second },
		"negative lease":   func(c *Config) { c.LeaseDuration = -time.Second },
		"wait over 1 hour": func(c *Config) { c.CampaignWait = 2 * time.Hour },
	} {
		cfg := ok
		mend(&cfg)
		if _, err := NewLeaderElector(cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: want ErrInvalidConfig, got %v", name, err)
		}
	}
	le, err := NewLeaderElector(ok)
	if err != nil {
		t.Fatal(err)
	}
	if le.cfg.LeaseDuration != 15*time.Second || le.cfg.CampaignWait != 60*time.Second || le.cfg.safety() != 1500*time.Millisecond {
		t.Fatalf("defaults: %+v", le.cfg)
	}
	if le.IsLeader() || le.GetLeader() != "" || le.Resign() {
		t.Fatal("a candidate that never ran leads")
	}
	if _, ok := TermFrom(context.Background()); ok {
		t.Fatal("a term in a context that has none")
	}
}

func TestTheTrackerTellsEachTermOnceAndEveryGap(t *testing.T) {
	held := func(token uint64, value string) leasehold.Event {
		return leasehold.Event{State: leasehold.StateHeld, Token: token, Value: []byte(value)}
	}
	tr := newTracker()
	steps := []struct {
		ev   leasehold.Event
		want EventKind // 0: no event
	}{
		{leasehold.Event{State: leasehold.StateFree}, NoLeader}, // the first event ends the initial gap
		{leasehold.Event{State: leasehold.StateFree, Token: 0}, 0},
		{held(3, "a"), NewLeader},
		{held(3, "a"), 0},
		{held(3, "a2"), Proclaimed},
		{held(4, "b"), NewLeader},
		{held(2, "old"), 0}, // stale
		{leasehold.Event{State: leasehold.StateUnknown, Err: errors.New("broken")}, LeaderUnknown},
		{held(4, "b"), Proclaimed}, // after a gap the same leader is told again, not as a new term
		{leasehold.Event{State: leasehold.StateLockDelay, Token: 4}, NoLeader},
		{leasehold.Event{State: leasehold.StateRecoveryGrace, Token: 4}, LeaderUnknown},
		{leasehold.Event{State: leasehold.StateFree, Token: 4}, NoLeader},
		{held(5, "c"), NewLeader},
	}
	for i, s := range steps {
		le, ok := tr.decide(s.ev)
		if !ok && s.want != 0 || ok && le.Kind != s.want {
			t.Fatalf("step %d (%v token %d): got %v (told %v), want %v", i, s.ev.State, s.ev.Token, le.Kind, ok, s.want)
		}
	}
	if term, identity, ok := tr.leader(); !ok || term != 5 || identity != "c" {
		t.Fatalf("leader: %d %q %v", term, identity, ok)
	}
}

// What no retry mends ends Run at once: a client that may not observe (ProtocolRevision 1.3),
// a closed client. RunOrDie panics on an invalid config.
func TestRunEndsAtOnceWhenTheClientCannotElect(t *testing.T) {
	legacy, err := leasehold.New(leasehold.Options{Servers: []string{"127.0.0.1:1"}, ProtocolRevision: leasehold.Revision13})
	if err != nil {
		t.Fatal(err)
	}
	defer legacy.Close()
	closed, err := leasehold.New(leasehold.Options{Servers: []string{"127.0.0.1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	for name, c := range map[string]struct {
		client *leasehold.Client
		want   error
	}{"revision 1.3": {legacy, leasehold.ErrUnavailable}, "closed": {closed, leasehold.ErrClosed}} {
		le, err := NewLeaderElector(Config{Client: c.client, Key: "k", Identity: "me",
			Callbacks: LeaderCallbacks{OnStartedLeading: func(context.Context) { t.Error("led") }}})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := le.Run(ctx); !errors.Is(err, c.want) {
			t.Errorf("%s: Run returned %v, want %v", name, err, c.want)
		}
		cancel()
	}
	defer func() {
		if recover() == nil {
			t.Error("RunOrDie did not panic on an invalid config")
		}
	}()
	RunOrDie(context.Background(), Config{})
}

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"leasehold.dev/leasehold"
)

// The controller of docs/go.md against the real server jar (LEASEHOLD_SERVER_JAR, else the
// repository's target/leasehold-*.jar): one replica leads and writes with its term, the other
// is told who leads; when the leader's grant is lost it stops, the standby leads, and the old
// term is refused by the store; a shutdown hands over at once.

func startServer(t *testing.T) string {
	jar := os.Getenv("LEASEHOLD_SERVER_JAR")
	if jar == "" {
		matches, _ := filepath.Glob("../../../../target/leasehold-[0-9]*.jar")
		for _, m := range matches {
			if !strings.HasSuffix(m, "-embedded.jar") { // the classes jar of leasehold-test, not runnable
				jar = m
			}
		}
		if jar == "" {
			t.Fatal("no server jar: set LEASEHOLD_SERVER_JAR or run ./mvnw -B package -DskipTests -pl :leasehold -am")
		}
	}
	var out bytes.Buffer
	var mu sync.Mutex
	cmd := exec.Command("java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m", "-jar", jar,
		"--leasehold.port=0", "--server.port=0", "--leasehold.io-threads=2", "--leasehold.data-dir="+t.TempDir())
	w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return out.Write(p) })
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	listening := regexp.MustCompile(`Leasehold protocol listening on [^:\s]+:(\d+)`)
	for start := time.Now(); time.Since(start) < 120*time.Second; time.Sleep(100 * time.Millisecond) {
		mu.Lock()
		m := listening.FindSubmatch(out.Bytes())
		mu.Unlock()
		if m != nil {
			return "127.0.0.1:" + string(m[1])
		}
	}
	t.Fatalf("the server did not listen within 120 s:\n%s", out.String())
	return ""
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func (s *FencedStore) highestToken() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.highest
}

type lines struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lines) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Write(p) }
func (l *lines) String() string              { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	for start := time.Now(); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Since(start) > within {
			t.Fatalf("waited %v for %s", within, what)
		}
	}
}

func TestTheControllerLeadsOnlyWhileItHoldsTheLock(t *testing.T) {
	addr := startServer(t)
	newClient := func() *leasehold.Client {
		c, err := leasehold.New(leasehold.Options{Servers: []string{addr}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	store := &FencedStore{}
	const lock = "controllers/test"
	var logA, logB lines
	ctxA, stopA := context.WithCancel(context.Background())
	ctxB, stopB := context.WithCancel(context.Background())
	doneA, doneB := make(chan error, 1), make(chan error, 1)
	go func() {
		doneA <- Run(ctxA, newClient(), store, lock, "A", 3*time.Second, 100*time.Millisecond, log.New(&logA, "A ", 0))
	}()
	eventually(t, 10*time.Second, "replica A to lead and write", func() bool { return store.highestToken() > 0 })
	tokenA := store.highestToken()
	go func() {
		doneB <- Run(ctxB, newClient(), store, lock, "B", 3*time.Second, 100*time.Millisecond, log.New(&logB, "B ", 0))
	}()
	time.Sleep(500 * time.Millisecond) // B waits in the lock's queue
	if store.highestToken() != tokenA || !strings.Contains(logA.String(), fmt.Sprintf("leading with token %d", tokenA)) || strings.Contains(logB.String(), "leading") ||
		!strings.Contains(logB.String(), "the leader is A") {
		t.Fatalf("only A may lead: store token %d, A: %q, B: %q", store.highestToken(), logA.String(), logB.String())
	}

	// A's lease is lost (released by an operator with the token): B is granted, A stops.
	if err := newClient().Release(context.Background(), lock, tokenA); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "replica B to lead and write", func() bool { return store.highestToken() > tokenA })
	eventually(t, 5*time.Second, "replica A to stop leading", func() bool { return strings.Contains(logA.String(), "stopped leading") })
	if err := store.Put(tokenA, "orders/replicas", "stale"); !errors.Is(err, ErrStaleToken) {
		t.Fatalf("a write with A's old token must be refused, got %v", err)
	}
	if !strings.Contains(logB.String(), "leading with token") {
		t.Fatalf("B: %q", logB.String())
	}

	// B shuts down: it resigns, and A (queued again since it stopped) leads at once, not after the lease.
	tokenB := store.highestToken()
	eventually(t, 5*time.Second, "A to be told that B leads", func() bool { return strings.Contains(logA.String(), "the leader is B") })
	stoppedB := time.Now()
	stopB()
	eventually(t, 2*time.Second, "replica A to lead again and write", func() bool { return store.highestToken() > tokenB })
	t.Logf("B's shutdown to A's first write: %v (lease 3 s, period 100 ms)", time.Since(stoppedB))
	stopA()
	for _, done := range []chan error{doneA, doneB} {
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Run: want context.Canceled, got %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return within 10 s of its context's end")
		}
	}
}

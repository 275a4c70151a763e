package leasehold

import (
	"context"
	"errors"
	"testing"
	"time"
)

func newClient(t testing.TB, opts Options) *Client {
	t.Helper()
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func direct(t testing.TB) *Client {
	return newClient(t, Options{Servers: []string{server(t).addr}})
}

func mustAcquire(t testing.TB, c *Client, key string, wait, lease time.Duration) *Ticket {
	t.Helper()
	tk, err := c.Acquire(context.Background(), key, wait, lease)
	if err != nil {
		t.Fatalf("acquire %s: %v", key, err)
	}
	return tk
}

func TestAcquireUseRelease(t *testing.T) {
	t.Parallel()
	c := direct(t)
	ctx := context.Background()
	tk := mustAcquire(t, c, "basic/a", 0, 10*time.Second)
	if tk.Token() == 0 || !tk.Valid() || tk.Remaining() < 9*time.Second {
		t.Fatalf("ticket: token %d valid %v remaining %v", tk.Token(), tk.Valid(), tk.Remaining())
	}
	if _, err := c.Acquire(ctx, "basic/a", 0, 5*time.Second); !errors.Is(err, ErrTimedOut) {
		t.Fatalf("second acquire: want ErrTimedOut, got %v", err)
	}
	if ok, err := tk.Check(ctx); !ok || err != nil {
		t.Fatalf("check: %v %v", ok, err)
	}
	if err := tk.Extend(ctx, 20*time.Second); err != nil || tk.Remaining() < 19*time.Second {
		t.Fatalf("extend: %v, remaining %v", err, tk.Remaining())
	}
	if err := tk.Release(ctx); err != nil {
		t.Fatalf("release: %v", err)
	}
	if ok, err := c.Check(ctx, "basic/a", tk.Token()); ok || err != nil {
		t.Fatalf("check after release: %v %v", ok, err)
	}
	if err := c.Release(ctx, "basic/a", tk.Token()); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("second release: want ErrNotHeld, got %v", err)
	}
	next := mustAcquire(t, c, "basic/a", 0, 5*time.Second)
	if next.Token() <= tk.Token() {
		t.Fatalf("tokens must grow: %d then %d", tk.Token(), next.Token())
	}
	next.Release(ctx)
	if _, err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestQueuedAcquireIsGrantedInOrder(t *testing.T) {
	t.Parallel()
	c := direct(t)
	ctx := context.Background()
	held := mustAcquire(t, c, "basic/fifo", 0, 30*time.Second)
	got := make(chan *Ticket, 1)
	go func() {
		tk, err := c.Acquire(ctx, "basic/fifo", 10*time.Second, 5*time.Second)
		if err != nil {
			t.Errorf("queued acquire: %v", err)
		}
		got <- tk
	}()
	time.Sleep(300 * time.Millisecond)
	held.Release(ctx)
	select {
	case tk := <-got:
		if tk != nil {
			if tk.Token() <= held.Token() {
				t.Fatalf("token %d not above %d", tk.Token(), held.Token())
			}
			tk.Release(ctx)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("queued acquire not granted within 10 s of the release")
	}
}

func TestInvalidArgumentsAreRejectedBeforeSending(t *testing.T) {
	c := newClient(t, Options{Servers: []string{"127.0.0.1:1"}})
	ctx := context.Background()
	for _, tc := range []struct {
		key         string
		wait, lease time.Duration
	}{{"", 0, time.Second}, {"a\nb", 0, time.Second}, {"\xff", 0, time.Second}, {"k", -1, time.Second},
		{"k", 3601 * time.Second, time.Second}, {"k", 0, 0}, {"k", 0, 1500 * time.Millisecond}, {"k", 0, 256 * time.Second}} {
		if _, err := c.Acquire(ctx, tc.key, tc.wait, tc.lease); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("acquire(%q, %v, %v): want ErrInvalidArgument, got %v", tc.key, tc.wait, tc.lease, err)
		}
	}
}

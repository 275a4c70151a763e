// Command bench runs the W1 sync and W2 workloads of BENCHMARKS.md through the Go client, to
// compare with the Java client's target ("client") on the same server:
//
//	go run ./bench -server 127.0.0.1:7420 -workloads w1,w2 -warmup 3s -duration 10s
//
// W1 sync: 16 goroutines, each cycling over its own 64 keys: acquire (wait 0, lease 30 s), then
// release. W2: 16 workers on one key: acquire (wait 10 s, lease 30 s), release at once; a
// hand-off is a grant whose previous holder was another worker; Jain's index over grants per
// worker. One shared Client (PoolSize 2, as the Java target's one LeaseholdClient).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"leasehold.dev/leasehold"
)

func main() {
	server := flag.String("server", "127.0.0.1:7420", "server address")
	workloads := flag.String("workloads", "w1,w2", "w1 and/or w2")
	threads := flag.Int("threads", 16, "W1 goroutines")
	keys := flag.Int("keys", 64, "W1 keys per goroutine")
	waiters := flag.Int("w2-waiters", 16, "W2 workers on one key")
	warmup := flag.Duration("warmup", 3*time.Second, "not recorded")
	duration := flag.Duration("duration", 10*time.Second, "measured")
	pool := flag.Int("pool", 2, "client sessions")
	flag.Parse()
	client, err := leasehold.New(leasehold.Options{Servers: []string{*server}, PoolSize: *pool})
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	for _, w := range strings.Split(*workloads, ",") {
		switch w {
		case "w1":
			w1(client, *threads, *keys, *warmup, *duration)
		case "w2":
			w2(client, *waiters, *warmup, *duration)
		default:
			fmt.Fprintf(os.Stderr, "unknown workload %q\n", w)
			os.Exit(2)
		}
	}
}

// window is the measured interval: recording is on between warm-up and end.
type window struct {
	recording atomic.Bool
	stop      atomic.Bool
}

func run(workers int, warmup, duration time.Duration, body func(w int, win *window)) {
	win := &window{}
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func(i int) { defer wg.Done(); body(i, win) }(i)
	}
	time.Sleep(warmup)
	win.recording.Store(true)
	time.Sleep(duration)
	win.recording.Store(false)
	win.stop.Store(true)
	wg.Wait()
}

func w1(c *leasehold.Client, threads, keys int, warmup, duration time.Duration) {
	prefix := fmt.Sprintf("bench/go-w1/%d/", time.Now().UnixNano())
	var mu sync.Mutex
	var pairs, notGranted int64
	var lat []time.Duration
	ctx := context.Background()
	run(threads, warmup, duration, func(w int, win *window) {
		var mine []time.Duration
		var n, ng int64
		for i := 0; !win.stop.Load(); i++ {
			key := fmt.Sprintf("%s%d/%d", prefix, w, i%keys)
			t0 := time.Now()
			tk, err := c.Acquire(ctx, key, 0, 30*time.Second)
			t1 := time.Now()
			if err != nil {
				if win.recording.Load() {
					ng++
				}
				continue
			}
			tk.Release(ctx)
			if win.recording.Load() {
				n++
				mine = append(mine, t1.Sub(t0))
			}
		}
		mu.Lock()
		pairs += n
		notGranted += ng
		lat = append(lat, mine...)
		mu.Unlock()
	})
	fmt.Printf("W1 sync (Go client, %d goroutines): %.0f pairs/s, acquire p50 %s p99 %s, not granted %d\n",
		threads, float64(pairs)/duration.Seconds(), pct(lat, 50), pct(lat, 99), notGranted)
}

func w2(c *leasehold.Client, waiters int, warmup, duration time.Duration) {
	key := fmt.Sprintf("bench/go-w2/%d", time.Now().UnixNano())
	var lastHolder atomic.Int64
	lastHolder.Store(-1)
	grants := make([]int64, waiters)
	var handoffs, total, notGranted atomic.Int64
	ctx := context.Background()
	run(waiters, warmup, duration, func(w int, win *window) {
		for !win.stop.Load() {
			tk, err := c.Acquire(ctx, key, 10*time.Second, 30*time.Second)
			if err != nil {
				if win.recording.Load() {
					notGranted.Add(1)
				}
				continue
			}
			previous := lastHolder.Swap(int64(w))
			if win.recording.Load() {
				grants[w]++
				total.Add(1)
				if previous != int64(w) {
					handoffs.Add(1)
				}
			}
			tk.Release(ctx)
		}
	})
	var sum, sumSq float64
	for _, g := range grants {
		sum += float64(g)
		sumSq += float64(g) * float64(g)
	}
	jain := sum * sum / (float64(len(grants)) * sumSq)
	fmt.Printf("W2 (Go client, %d workers, one key): %.0f hand-offs/s, %.0f acquisitions/s, Jain %.4f, not granted %d\n",
		waiters, float64(handoffs.Load())/duration.Seconds(), float64(total.Load())/duration.Seconds(), jain, notGranted.Load())
}

func pct(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[(len(d)-1)*p/100].Round(time.Microsecond)
}

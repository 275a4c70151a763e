package leaderelection

import (
	"bytes"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"leasehold.dev/leasehold"
)

// The real server, as a separate JVM started from the jar Maven's package phase built
// (LEASEHOLD_SERVER_JAR, set by clients/go/pom.xml; else the repository's target/leasehold-*.jar),
// on port 0, once for the package's tests (each test uses its own key); TestMain stops it.

var (
	serverOnce sync.Once
	serverAddr string
	serverErr  string
	serverCmd  *exec.Cmd
	serverDir  string
)

func startServer(t *testing.T) string {
	serverOnce.Do(func() { serverAddr, serverErr = launchServer() })
	if serverAddr == "" {
		t.Fatal(serverErr)
	}
	return serverAddr
}

func launchServer() (addr, problem string) {
	jar := os.Getenv("LEASEHOLD_SERVER_JAR")
	if jar == "" {
		matches, _ := filepath.Glob("../../../target/leasehold-[0-9]*.jar")
		for _, m := range matches {
			if !strings.HasSuffix(m, "-plain.jar") && !strings.HasSuffix(m, "-embedded.jar") {
				jar = m
			}
		}
		if jar == "" {
			return "", "no server jar: set LEASEHOLD_SERVER_JAR or run ./mvnw -B package -DskipTests -pl :leasehold -am"
		}
	}
	dir, err := os.MkdirTemp("", "leaderelection-data")
	if err != nil {
		return "", err.Error()
	}
	serverDir = dir
	var out syncBuffer
	serverCmd = exec.Command("java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m", "-jar", jar,
		"--leasehold.port=0", "--server.port=0", "--leasehold.io-threads=2", "--leasehold.data-dir="+dir)
	serverCmd.Stdout, serverCmd.Stderr = &out, &out
	if err := serverCmd.Start(); err != nil {
		return "", err.Error()
	}
	listening := regexp.MustCompile(`Leasehold protocol listening on [^:\s]+:(\d+)`)
	// A JVM start on two loaded cores: generous, it only bounds a hang.
	for start := time.Now(); time.Since(start) < 120*time.Second; time.Sleep(100 * time.Millisecond) {
		if m := listening.FindSubmatch(out.Bytes()); m != nil {
			return "127.0.0.1:" + string(m[1]), ""
		}
	}
	return "", "the server did not listen within 120 s:\n" + string(out.Bytes())
}

func TestMain(m *testing.M) {
	code := m.Run()
	if serverCmd != nil && serverCmd.Process != nil {
		serverCmd.Process.Kill()
		serverCmd.Wait()
	}
	if serverDir != "" {
		os.RemoveAll(serverDir)
	}
	os.Exit(code)
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.b.Bytes()...)
}

func newClient(t *testing.T, addr string) *leasehold.Client {
	c, err := leasehold.New(leasehold.Options{Servers: []string{addr}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// partitionProxy forwards TCP connections to a target until cut: then it drops every byte in
// both directions, on open connections and new ones, which stay open. A network partition as a
// client sees it: writes succeed, nothing is answered. (The fault proxy of the leasehold
// package's tests, proxy_test.go, is not importable from here; this is the one fault needed.)
type partitionProxy struct {
	target string
	ln     net.Listener
	cut    atomic.Bool
	mu     sync.Mutex
	conns  []net.Conn
}

func newPartitionProxy(t *testing.T, target string) *partitionProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &partitionProxy{target: target, ln: ln}
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *partitionProxy) addr() string { return p.ln.Addr().String() }

func (p *partitionProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.track(c)
		if p.cut.Load() {
			go io.Copy(io.Discard, c)
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.track(s)
		go p.pump(s, c)
		go p.pump(c, s)
	}
}

func (p *partitionProxy) track(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.conns = append(p.conns, c)
}

func (p *partitionProxy) pump(dst, src net.Conn) {
	buf := make([]byte, 4096)
	for {
		n, err := src.Read(buf)
		if err != nil {
			dst.Close()
			src.Close()
			return
		}
		if !p.cut.Load() {
			dst.Write(buf[:n])
		}
	}
}

func (p *partitionProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

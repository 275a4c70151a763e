package leasehold

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// The real server, as a separate JVM started from the jar Maven's package phase built
// (LEASEHOLD_SERVER_JAR, set by clients/go/pom.xml; else ../../target/leasehold-*.jar).

var listening = regexp.MustCompile(`Leasehold protocol listening on 0\.0\.0\.0:(\d+)`)

type serverProcess struct {
	cmd  *exec.Cmd
	port int
	addr string
	log  string
	dir  string
	done chan struct{}
}

func serverJar(t testing.TB) string {
	if jar := os.Getenv("LEASEHOLD_SERVER_JAR"); jar != "" {
		if _, err := os.Stat(jar); err != nil {
			t.Fatalf("LEASEHOLD_SERVER_JAR=%s: %v", jar, err)
		}
		return jar
	}
	matches, _ := filepath.Glob("../../target/leasehold-[0-9]*.jar")
	for _, m := range matches {
		if !strings.HasSuffix(m, "-plain.jar") && !strings.HasSuffix(m, ".original") {
			return m
		}
	}
	t.Fatalf("no server jar: set LEASEHOLD_SERVER_JAR or build it first (./mvnw -B package -DskipTests -pl :leasehold -am)")
	return ""
}

// startServer starts a server with the given --name=value arguments and waits until its
// protocol port listens. port 0 picks a free one (read from the log).
func startServer(t testing.TB, dataDir string, args ...string) *serverProcess {
	jar := serverJar(t)
	if dataDir == "" {
		d, err := os.MkdirTemp("", "leasehold-go-data")
		if err != nil {
			t.Fatal(err)
		}
		dataDir = d
	}
	logf, err := os.CreateTemp("", "leasehold-go-server*.log")
	if err != nil {
		t.Fatal(err)
	}
	all := []string{"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m", "-Xshare:auto", "-jar", jar,
		"--server.port=0", "--leasehold.io-threads=2", "--leasehold.data-dir=" + dataDir}
	hasPort := false
	for _, a := range args {
		hasPort = hasPort || strings.HasPrefix(a, "--leasehold.port=")
	}
	if !hasPort {
		all = append(all, "--leasehold.port=0")
	}
	all = append(all, args...)
	cmd := exec.Command("java", all...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the server: %v", err)
	}
	p := &serverProcess{cmd: cmd, log: logf.Name(), dir: dataDir, done: make(chan struct{})}
	go func() { cmd.Wait(); logf.Close(); close(p.done) }()
	deadline := time.Now().Add(120 * time.Second) // a JVM start on two loaded cores: generous, it only bounds a hang
	for {
		b, _ := os.ReadFile(p.log)
		if m := listening.FindSubmatch(b); m != nil {
			fmt.Sscanf(string(m[1]), "%d", &p.port)
			break
		}
		select {
		case <-p.done:
			t.Fatalf("the server exited before listening; log %s:\n%s", p.log, tail(b))
		default:
		}
		if time.Now().After(deadline) {
			p.kill()
			t.Fatalf("the server did not listen within 120 s; log %s:\n%s", p.log, tail(b))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if p.port == 0 {
		for _, a := range args {
			if strings.HasPrefix(a, "--leasehold.port=") {
				fmt.Sscanf(strings.TrimPrefix(a, "--leasehold.port="), "%d", &p.port)
			}
		}
	}
	p.addr = fmt.Sprintf("127.0.0.1:%d", p.port)
	return p
}

func tail(b []byte) string {
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

// kill stops the process at once (kill -9) and waits for it.
func (p *serverProcess) kill() {
	p.cmd.Process.Kill()
	<-p.done
}

func (p *serverProcess) close() {
	p.kill()
	os.Remove(p.log)
	os.RemoveAll(p.dir)
}

// logContains reports whether the server's log has a line containing s.
func (p *serverProcess) logContains(s string) bool {
	f, err := os.Open(p.log)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.Contains(sc.Text(), s) {
			return true
		}
	}
	return false
}

// freePorts returns n ports free at the moment (for the cluster, whose peers must know each
// other's ports before they start).
func freePorts(t testing.TB, n int) []int {
	var ls []net.Listener
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// The shared single server of most tests, started once.
var (
	sharedOnce   sync.Once
	sharedServer *serverProcess
	sharedErr    string
)

func server(t testing.TB) *serverProcess {
	sharedOnce.Do(func() {
		ft := &fatalCatcher{TB: t}
		func() {
			defer func() { recover() }()
			sharedServer = startServer(ft, "")
		}()
		sharedErr = ft.msg
	})
	if sharedServer == nil {
		t.Fatalf("the shared server did not start: %s", sharedErr)
	}
	return sharedServer
}

// fatalCatcher turns a Fatalf in a sync.Once into a message every test can report.
type fatalCatcher struct {
	testing.TB
	msg string
}

func (f *fatalCatcher) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(f.msg)
}

func (f *fatalCatcher) Fatal(args ...any) {
	f.msg = fmt.Sprint(args...)
	panic(f.msg)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedServer != nil {
		sharedServer.close()
	}
	os.Exit(code)
}

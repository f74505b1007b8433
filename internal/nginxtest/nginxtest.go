// Package nginxtest starts a real nginx for a test: Debian's
// /usr/sbin/nginx (or $RATESIM_NGINX) on a free loopback port, with a
// configuration of the test's, in a temporary directory, stopped by its
// PID when the test ends, whether it passes or fails.
//
// Under CI=true a missing nginx fails the test; elsewhere the test is
// skipped with one line saying why.
package nginxtest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A Server is an nginx a test started.
type Server struct {
	// Addr is where it listens: 127.0.0.1:PORT.
	Addr string
	// Dir is its prefix directory, which holds its configuration, its
	// logs and what it serves (html/).
	Dir  string
	cmd  *exec.Cmd
	done chan struct{} // closed once nginx has exited
}

// Binary returns the nginx to run: $RATESIM_NGINX, else /usr/sbin/nginx,
// else the one on $PATH; "" when there is none.
func Binary() string {
	if p := os.Getenv("RATESIM_NGINX"); p != "" {
		return p
	}
	if _, err := os.Stat("/usr/sbin/nginx"); err == nil {
		return "/usr/sbin/nginx"
	}
	if p, err := exec.LookPath("nginx"); err == nil {
		return p
	}
	return ""
}

// Start starts nginx with http, the body of its http block, in which
// {{port}} is the port it is to listen on and {{dir}} its directory (it
// serves {{dir}}/html, which holds index.html). It waits until nginx
// answers on the port, and stops it when the test ends.
func Start(t testing.TB, http string) *Server {
	t.Helper()
	bin := Binary()
	if bin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("nginx is not installed (apt-get install nginx): CI needs it")
		}
		t.Skip("nginx is not installed (apt-get install nginx); skipping the test against a real nginx")
	}
	var lastErr error
	for range 5 {
		s, err := start(t, bin, http)
		if err == nil {
			return s
		}
		lastErr = err
	}
	t.Fatalf("nginx did not start: %v", lastErr)
	return nil
}

func start(t testing.TB, bin, http string) (*Server, error) {
	dir := t.TempDir()
	// Its workers may run as another user: they must reach what it serves.
	for d := dir; d != "/" && d != "."; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			break
		}
		if d == os.TempDir() {
			break
		}
	}
	for _, sub := range []string{"html", "logs", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "html", "index.html"), []byte("ok\n"), 0o644); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;\n"
	}
	body := strings.NewReplacer("{{port}}", strconv.Itoa(port), "{{dir}}", dir).Replace(http)
	conf := fmt.Sprintf(`%sdaemon off;
master_process on;
worker_processes 1;
pid %[2]s/nginx.pid;
error_log %[2]s/logs/error.log info;
events { worker_connections 128; }
http {
    client_body_temp_path %[2]s/tmp/body;
    proxy_temp_path %[2]s/tmp/proxy;
    fastcgi_temp_path %[2]s/tmp/fastcgi;
    uwsgi_temp_path %[2]s/tmp/uwsgi;
    scgi_temp_path %[2]s/tmp/scgi;
    access_log off;
%s
}
`, user, dir, body)
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-p", dir, "-c", confPath, "-e", filepath.Join(dir, "logs", "error.log"))
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{Addr: "127.0.0.1:" + strconv.Itoa(port), Dir: dir, cmd: cmd, done: make(chan struct{})}
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(s.done)
	}()
	deadline := time.Now().Add(15 * time.Second)
	for {
		select {
		case <-s.done:
			log, _ := os.ReadFile(filepath.Join(dir, "logs", "error.log"))
			return nil, fmt.Errorf("nginx exited (%v): %s%s", waitErr, stderr.String(), log)
		default:
		}
		if c, err := net.DialTimeout("tcp", s.Addr, 200*time.Millisecond); err == nil {
			c.Close()
			t.Cleanup(func() {
				s.Stop()
				if t.Failed() {
					log, _ := os.ReadFile(filepath.Join(dir, "logs", "error.log"))
					t.Logf("nginx's error log:\n%s", log)
				}
			})
			return s, nil
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-s.done
			return nil, errors.New("nginx did not answer within 15s: " + stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// freePort returns a loopback port nothing listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Stop stops nginx now, as the end of the test would (gracefully, its
// workers finishing what they do, killed after 10 s): for a test that
// reads what nginx wrote once it is done writing. Stopping it again does
// nothing.
func (s *Server) Stop() {
	select {
	case <-s.done:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
}

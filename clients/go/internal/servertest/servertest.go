// Package servertest starts real voxcol servers for tests: the binary named by $VOXCOL_SERVER
// (default /work/helper-bin/voxcol_server) on a loopback port with a fresh data directory.
// Tests skip when the binary is missing, unless $VOXCOL_REQUIRE_SERVER is set (test.sh sets
// it), in which case they fail.
package servertest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// WorldSize is the --world_size every server gets: bounds (-64,-48,-64)..(64,48,64).
const WorldSize = "128,96,128"

const (
	defaultServer = "/work/helper-bin/voxcol_server"
	defaultCLI    = "/work/helper-bin/voxcol"
)

// Server is a running voxcol_server process.
type Server struct {
	// Addr is "127.0.0.1:PORT".
	Addr string
	// Dir holds the data directory, the port file and the log.
	Dir string

	bin  string
	args []string
	cmd  *exec.Cmd
	exit chan error
}

// Binary returns the server binary, or skips (fails with $VOXCOL_REQUIRE_SERVER) the test.
func Binary(t testing.TB) string { return binary(t, "VOXCOL_SERVER", defaultServer) }

// CLI returns the voxcol CLI binary, or skips (fails with $VOXCOL_REQUIRE_SERVER) the test.
func CLI(t testing.TB) string { return binary(t, "VOXCOL_CLI", defaultCLI) }

func binary(t testing.TB, env, def string) string {
	t.Helper()
	path := os.Getenv(env)
	if path == "" {
		path = def
	}
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("VOXCOL_REQUIRE_SERVER") != "" {
			t.Fatalf("$%s: %v", env, err)
		}
		t.Skipf("no %s binary (%v); set $%s", filepath.Base(def), err, env)
	}
	return path
}

// Start starts a server with a fresh data directory in dir (made if needed) and extra flags,
// and waits until it listens.
func Start(bin, dir string, extra ...string) (*Server, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, bin: bin, args: append([]string{
		"--data_dir=" + filepath.Join(dir, "data"),
		"--world_size=" + WorldSize,
		"--port_file=" + filepath.Join(dir, "port"),
		"--metrics_listen=127.0.0.1:0",
		"--backup_root=" + filepath.Join(dir, "backups"),
	}, extra...)}
	return s, s.start("127.0.0.1:0")
}

// StartT is Start for a test: the server is stopped when the test ends.
func StartT(t testing.TB, extra ...string) *Server {
	t.Helper()
	s, err := Start(Binary(t), t.TempDir(), extra...)
	if err != nil {
		t.Fatalf("starting voxcol_server: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

func (s *Server) start(listen string) error {
	portFile := filepath.Join(s.Dir, "port")
	_ = os.Remove(portFile)
	logFile, err := os.OpenFile(filepath.Join(s.Dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	s.cmd = exec.Command(s.bin, append(append([]string{}, s.args...), "--listen="+listen)...)
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	if err := s.cmd.Start(); err != nil {
		return err
	}
	s.exit = make(chan error, 1)
	go func(cmd *exec.Cmd, exit chan<- error) { exit <- cmd.Wait() }(s.cmd, s.exit)

	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if data, err := os.ReadFile(portFile); err == nil {
			if port, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && port > 0 {
				s.Addr = fmt.Sprintf("127.0.0.1:%d", port)
				return nil
			}
		}
		select {
		case err := <-s.exit:
			s.cmd = nil
			return fmt.Errorf("voxcol_server exited (%v); log: %s", err, s.Log())
		case <-time.After(20 * time.Millisecond):
		}
	}
	s.Stop()
	return errors.New("voxcol_server wrote no port file within 30s; log: " + s.Log())
}

// Stop stops the server (SIGTERM, then SIGKILL after 10 s) and waits for it. Idempotent.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exit:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exit
	}
	s.cmd = nil
}

// Restart starts the stopped server again on the same port and data directory.
func (s *Server) Restart() error {
	if s.cmd != nil {
		return errors.New("server is running")
	}
	return s.start(s.Addr)
}

// Log returns the server's log so far.
func (s *Server) Log() string {
	data, _ := os.ReadFile(filepath.Join(s.Dir, "server.log"))
	return string(data)
}

//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/sys/unix"
)

// pty is a pseudo-terminal: the test holds the master; the command under
// test gets the slave as its controlling terminal.
type pty struct {
	master, slave *os.File
	mu            sync.Mutex
	seen          bytes.Buffer // everything the terminal displayed
}

func openPTY(t *testing.T) *pty {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("SKIPPED: no pseudo-terminal (/dev/ptmx): %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	p := &pty{master: m, slave: s}
	go func() {
		buf := make([]byte, 1024)
		for {
			n, err := m.Read(buf)
			p.mu.Lock()
			p.seen.Write(buf[:n])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { s.Close(); m.Close() })
	return p
}

// waitShown waits up to 30 s until the terminal has displayed want n times.
func (p *pty) waitShown(t *testing.T, want string, n int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		p.mu.Lock()
		got := p.seen.String()
		p.mu.Unlock()
		if strings.Count(got, want) >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the terminal shows %q, want %q", got, want)
		}
	}
}

func (p *pty) shown() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen.String()
}

// startOnTerminal starts the binary with args, its stdin and stderr on the
// terminal (its controlling terminal), its stdout into out.
func startOnTerminal(t *testing.T, p *pty, out *bytes.Buffer, args ...string) (*exec.Cmd, <-chan struct{}) {
	t.Helper()
	cmd := exec.Command(testBinary(t), args...)
	cmd.Stdin, cmd.Stderr, cmd.Stdout = p.slave, p.slave, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	return cmd, exited
}

// TestHashPasswordOnATerminal: on a terminal hash-password prompts on
// stderr, twice, reads the password without echoing it, and prints the
// hash on stdout.
func TestHashPasswordOnATerminal(t *testing.T) {
	p := openPTY(t)
	var out bytes.Buffer
	cmd, exited := startOnTerminal(t, p, &out, "hash-password", "-cost", "4")
	p.waitShown(t, "Password: ", 1)
	p.master.WriteString("s3cret pass\r")
	p.waitShown(t, "Password again: ", 1)
	p.master.WriteString("s3cret pass\r")
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("hash-password still running; the terminal shows %q", p.shown())
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("hash-password on a terminal: exit %d; the terminal shows %q", code, p.shown())
	}
	if strings.Contains(p.shown(), "s3cret") {
		t.Errorf("the terminal echoed the password: %q", p.shown())
	}
	hash := strings.TrimSpace(out.String())
	if err := bcrypt.CompareHashAndPassword([]byte(hash), []byte("s3cret pass")); err != nil {
		t.Errorf("stdout %q is not a bcrypt hash of the password typed: %v", out.String(), err)
	}
}

// TestHashPasswordOnATerminalMismatch: two different passwords are a usage
// error, and nothing is printed on stdout.
func TestHashPasswordOnATerminalMismatch(t *testing.T) {
	p := openPTY(t)
	var out bytes.Buffer
	cmd, exited := startOnTerminal(t, p, &out, "hash-password", "-cost", "4")
	p.waitShown(t, "Password: ", 1)
	p.master.WriteString("one\r")
	p.waitShown(t, "Password again: ", 1)
	p.master.WriteString("two\r")
	<-exited
	// The terminal's reader may get the last octets after the exit.
	p.waitShown(t, "the two passwords differ", 1)
	if code := cmd.ProcessState.ExitCode(); code != 2 || out.Len() != 0 || !strings.Contains(p.shown(), "the two passwords differ") {
		t.Errorf("hash-password with two passwords: exit %d, stdout %q, terminal %q; want 2, nothing, and why", code, out.String(), p.shown())
	}
}

// TestHashPasswordOnATerminalInterrupted: SIGINT at the prompt ends it
// within a second with 130, and the terminal echoes again.
func TestHashPasswordOnATerminalInterrupted(t *testing.T) {
	p := openPTY(t)
	var out bytes.Buffer
	cmd, exited := startOnTerminal(t, p, &out, "hash-password")
	p.waitShown(t, "Password: ", 1)
	cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-exited:
	case <-time.After(time.Second):
		t.Fatalf("hash-password at its prompt still running 1s after SIGINT; the terminal shows %q", p.shown())
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("hash-password after SIGINT: exit %d, want 130", code)
	}
	tio, err := unix.IoctlGetTermios(int(p.slave.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	if tio.Lflag&unix.ECHO == 0 {
		t.Errorf("the terminal does not echo after hash-password was interrupted: its state was not restored")
	}
}

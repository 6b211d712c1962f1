//go:build linux

package testkit

import (
	"context"
	encbin "encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"syscall"
	"testing"
	"time"
)

// NewStampedServer starts an httptest server whose handlers can ask when
// their request arrived (ArrivedAt). It stops when the test ends.
func NewStampedServer(t testing.TB, h http.Handler) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	// On the listening socket first: the kernel stamps packets only once
	// some socket asks for it, and accepted sockets inherit the option,
	// so a request that comes before Accept returns is stamped too.
	if tl, ok := srv.Listener.(*net.TCPListener); ok {
		if raw, err := tl.SyscallConn(); err == nil {
			_ = raw.Control(func(fd uintptr) { _ = setStamping(fd) })
		}
	}
	srv.Listener = stampListener{srv.Listener}
	srv.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if sc, ok := c.(*stampConn); ok {
			return context.WithValue(ctx, stampKey{}, sc)
		}
		return ctx
	}
	srv.Start()
	t.Cleanup(srv.Close)
	waitStamping(t)
	return srv
}

// waitStamping waits until the kernel stamps received packets. It turns
// stamping on for the whole system only some time after the first socket
// asks for it (a deferred work item flips a static key, late on a busy
// machine), and off after the last one closes; a packet received
// meanwhile carries no timestamp, or the time it is read. The server's
// listening socket asks for stamping from its start to its end; a probe
// connection of its own is sent until one arrives stamped, for at most
// 10s.
func waitStamping(t testing.TB) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if probeStamped() {
			return
		}
	}
	t.Logf("stamped server: the kernel gave no receive timestamp within 10s; arrivals fall back to the handler's clock")
}

// probeStamped sends one octet over a new loopback connection to a
// stamping listener and reports whether its read carried a timestamp.
func probeStamped() bool {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return false
	}
	defer ln.Close()
	sl := stampListener{ln}
	done := make(chan bool, 1)
	go func() {
		c, err := sl.Accept()
		if err != nil {
			done <- false
			return
		}
		defer c.Close()
		sc, ok := c.(*stampConn)
		if !ok {
			done <- false
			return
		}
		_ = sc.SetReadDeadline(time.Now().Add(time.Second))
		var b [1]byte
		_, err = sc.Read(b[:])
		done <- err == nil && !sc.arrival().IsZero()
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return false
	}
	defer c.Close()
	_, _ = c.Write([]byte{1})
	return <-done
}

// ArrivedAt returns when r's first octets reached the origin's socket, on
// the wall clock (CLOCK_REALTIME), and true; or, when the kernel gave no
// timestamp, now and false.
func ArrivedAt(r *http.Request) (time.Time, bool) {
	if sc, ok := r.Context().Value(stampKey{}).(*stampConn); ok {
		if at := sc.arrival(); !at.IsZero() {
			return at, true
		}
	}
	return time.Now(), false
}

type stampKey struct{}

// stampListener turns receive timestamps on for each connection.
type stampListener struct{ net.Listener }

func (l stampListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c, nil
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return c, nil
	}
	var serr error
	if err := raw.Control(func(fd uintptr) { serr = setStamping(fd) }); err != nil || serr != nil {
		return c, nil
	}
	return &stampConn{TCPConn: tc, raw: raw}, nil
}

// setStamping asks for receive timestamps on the socket fd.
func setStamping(fd uintptr) error {
	return syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
}

// stampConn reads with recvmsg and keeps the kernel's timestamp of the
// first octets read since the last response was written: the arrival of
// the request being served (clients through the proxy do not pipeline).
type stampConn struct {
	*net.TCPConn
	raw syscall.RawConn

	mu    sync.Mutex
	first time.Time
}

func (c *stampConn) arrival() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.first
}

func (c *stampConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var n, oobn int
	var rerr error
	oob := make([]byte, 128)
	err := c.raw.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = syscall.Recvmsg(int(fd), b, oob, 0)
		if rerr == nil {
			// An empty read(2), which consumes nothing, gives the race
			// detector what every socket read of the runtime gives it
			// and recvmsg does not: the octets read happen after the
			// writes that sent them, so that a handler sees what the
			// test set before its request was sent.
			_, _ = syscall.Read(int(fd), nil)
		}
		return !errors.Is(rerr, syscall.EAGAIN)
	})
	switch {
	case err != nil:
		return 0, err
	case rerr != nil:
		return 0, rerr
	case n == 0:
		return 0, io.EOF
	}
	if at, ok := rxStamp(oob[:oobn]); ok {
		c.mu.Lock()
		if c.first.IsZero() {
			c.first = at
		}
		c.mu.Unlock()
	}
	return n, nil
}

func (c *stampConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	c.first = time.Time{} // the next octets read are the next request's
	c.mu.Unlock()
	return c.TCPConn.Write(b)
}

// rxStamp finds the SCM_TIMESTAMPNS message in oob.
func rxStamp(oob []byte) (time.Time, bool) {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Time{}, false
	}
	for _, m := range msgs {
		if m.Header.Level == syscall.SOL_SOCKET && m.Header.Type == syscall.SCM_TIMESTAMPNS && len(m.Data) >= 16 {
			sec := int64(encbin.NativeEndian.Uint64(m.Data[0:8]))
			nsec := int64(encbin.NativeEndian.Uint64(m.Data[8:16]))
			return time.Unix(sec, nsec), true
		}
	}
	return time.Time{}, false
}

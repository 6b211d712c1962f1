package testkit

import (
	"io"
	"net"
	"testing"
)

// Serve listens on 127.0.0.1 (a raw TCP origin, or a CONNECT tunnel's far
// end) and hands each connection to serve in a goroutine of its own,
// closing the connection when serve returns. It stops when the test ends.
func Serve(t testing.TB, serve func(net.Conn)) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return ln
}

// Echo starts a TCP echo server on 127.0.0.1 (a CONNECT tunnel's far
// end): each connection gets back what it sends until it closes. It stops
// when the test ends.
func Echo(t testing.TB) net.Listener {
	t.Helper()
	return Serve(t, func(c net.Conn) { _, _ = io.Copy(c, c) })
}

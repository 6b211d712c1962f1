package testkit

import (
	"io"
	"net"
	"testing"
)

// Echo starts a TCP echo server on 127.0.0.1 (a CONNECT tunnel's far
// end): each connection gets back what it sends until it closes. It stops
// when the test ends.
func Echo(t testing.TB) net.Listener {
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
			go func() { _, _ = io.Copy(c, c); c.Close() }()
		}
	}()
	return ln
}

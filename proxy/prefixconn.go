package proxy

import "net"

// prefixConn is a connection whose first octets were already read off it
// (by the HTTP server's buffered reader, or to peek at what a tunnel
// carries): Read returns them first, then reads the connection.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixConn) Read(b []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(b, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}

// CloseWrite and CloseRead keep the half-close of the connection under it
// (goproxy relays a host-level tunnel with them); without one, CloseWrite
// closes the connection and CloseRead does nothing.
func (c *prefixConn) CloseWrite() error {
	if hc, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return hc.CloseWrite()
	}
	return c.Conn.Close()
}

// CloseRead: see CloseWrite.
func (c *prefixConn) CloseRead() error {
	if hc, ok := c.Conn.(interface{ CloseRead() error }); ok {
		return hc.CloseRead()
	}
	return nil
}

// unwrapPrefix returns the connection under c when c is a prefixConn, c
// otherwise: the connection the server accepted, which may watch the
// tunnel it carries (TunnelObserver, TunnelWatcher).
func unwrapPrefix(c net.Conn) net.Conn {
	if pc, ok := c.(*prefixConn); ok {
		return pc.Conn
	}
	return c
}

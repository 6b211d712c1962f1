package testkit

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"syscall"
)

// FullDisk is an audit log output with room for a set number of octets, as
// a file on a small file system: a write past the room stores what fits
// and fails with ENOSPC, as write(2) on a full file system does. Octets can
// be taken back (Unwrite, audit.Unwriter's method) unless NoUnwrite is set.
// It is safe for concurrent use: the room can change while writes run.
type FullDisk struct {
	mu        sync.Mutex
	buf       bytes.Buffer
	room      int
	noUnwrite bool
}

// NewFullDisk returns an empty FullDisk with room octets of room.
func NewFullDisk(room int) *FullDisk { return &FullDisk{room: room} }

// Write stores what fits of p; past the room it fails with an error that
// wraps syscall.ENOSPC.
func (d *FullDisk) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := min(len(p), max(d.room-d.buf.Len(), 0))
	d.buf.Write(p[:n])
	if n < len(p) {
		return n, fmt.Errorf("write audit.log: %w", syscall.ENOSPC)
	}
	return n, nil
}

// Unwrite takes the last n octets back, or fails when NoUnwrite is set.
func (d *FullDisk) Unwrite(n int) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.noUnwrite {
		return errors.New("cannot truncate")
	}
	d.buf.Truncate(d.buf.Len() - n)
	return nil
}

// SetRoom sets the room, in octets (what is stored stays).
func (d *FullDisk) SetRoom(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.room = n
}

// NoUnwrite makes Unwrite fail (true) or work (false).
func (d *FullDisk) NoUnwrite(fail bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.noUnwrite = fail
}

// Len returns how many octets are stored.
func (d *FullDisk) Len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.buf.Len()
}

// Bytes returns a copy of what is stored.
func (d *FullDisk) Bytes() []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return bytes.Clone(d.buf.Bytes())
}

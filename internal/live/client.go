package live

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Event is one Server-Sent Event of /live/events.
type Event struct {
	// Name is the event's name (EventHello, EventDecision, EventSkipped).
	Name string
	// ID is the event's id ("" for none): BOOT-SEQ for a decision.
	ID string
	// Data is the event's data, a JSON object.
	Data []byte
}

// maxEventBytes bounds one event a reader accepts: the longest audit line
// (64 KiB) and its envelope, with room to spare.
const maxEventBytes = 256 << 10

// ReadEvents reads Server-Sent Events from r (the text/event-stream
// format of the HTML Living Standard: "event:", "id:" and "data:" fields,
// comments and blank lines) and calls fn with each, until r ends (nil) or
// fn or the read fails (that error).
func ReadEvents(r io.Reader, fn func(Event) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventBytes)
	var ev Event
	var data bytes.Buffer
	for sc.Scan() {
		line := sc.Text()
		if line == "" { // dispatch
			if data.Len() > 0 {
				ev.Data = bytes.TrimSuffix(data.Bytes(), []byte("\n"))
				if ev.Name == "" {
					ev.Name = "message"
				}
				if err := fn(ev); err != nil {
					return err
				}
			}
			ev, data = Event{ID: ev.ID}, bytes.Buffer{}
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			ev.Name = value
		case "id":
			ev.ID = value
		case "data":
			data.WriteString(value)
			data.WriteByte('\n')
		}
	}
	return sc.Err()
}

// Follow reads the stream at url (an admin listener's /live/events with
// its query), never through HTTP_PROXY, and calls fn with every event
// until ctx ends (then it returns nil). When the stream breaks after it
// was open, it says so through gone (may be nil) and connects again
// every second, resuming after the last event it had (Last-Event-ID). A
// first connection that fails, an answer other than 200 at any time, and
// fn's error end it with that error.
func Follow(ctx context.Context, url string, fn func(Event) error, gone func(error)) error {
	client := &http.Client{Transport: &http.Transport{Proxy: nil}}
	lastID, opened := "", false
	for {
		err := follow(ctx, client, url, &lastID, &opened, fn)
		if ctx.Err() != nil {
			return nil
		}
		var refused *refusedError
		var stop *stopError
		switch {
		case errors.As(err, &stop):
			return stop.err
		case !opened || errors.As(err, &refused):
			return err
		}
		if gone != nil {
			gone(err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
}

// refusedError is an answer other than 200.
type refusedError struct{ msg string }

func (e *refusedError) Error() string { return e.msg }

// stopError is fn's error: Follow returns it.
type stopError struct{ err error }

func (e *stopError) Error() string { return e.err.Error() }

func follow(ctx context.Context, client *http.Client, url string, lastID *string, opened *bool, fn func(Event) error) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	if *lastID != "" {
		req.Header.Set("Last-Event-ID", *lastID)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return &refusedError{fmt.Sprintf("%s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))}
	}
	*opened = true
	err = ReadEvents(resp.Body, func(ev Event) error {
		if ev.ID != "" {
			*lastID = ev.ID
		}
		if err := fn(ev); err != nil {
			return &stopError{err}
		}
		return nil
	})
	if err == nil {
		err = io.ErrUnexpectedEOF // the server ended the stream (a shutdown)
	}
	return err
}

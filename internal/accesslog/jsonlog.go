package accesslog

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// JSONFields names the keys of a JSON-lines access log that hold each
// part of a request. Target and Method are used when set in the line;
// else Request (a whole request line, "GET /a HTTP/1.1") is split.
type JSONFields struct {
	Client, Time, Method, Target, Request, Status, UserAgent string
}

// DefaultJSONFields are nginx's variable names, as a log_format with
// escape=json usually spells them.
func DefaultJSONFields() JSONFields {
	return JSONFields{Client: "remote_addr", Time: "time_iso8601", Method: "request_method", Target: "request_uri",
		Request: "request", Status: "status", UserAgent: "http_user_agent"}
}

// JSONFieldNames are the NAMEs ParseJSONFields accepts.
func JSONFieldNames() []string {
	return []string{"client", "time", "method", "target", "request", "status", "user_agent"}
}

// ParseJSONFields reads "NAME=KEY,..." over DefaultJSONFields: NAME is
// one of JSONFieldNames, KEY a top-level key of the log's objects.
func ParseJSONFields(s string) (JSONFields, error) {
	f := DefaultJSONFields()
	if s == "" {
		return f, nil
	}
	for _, kv := range strings.Split(s, ",") {
		name, key, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok || key == "" {
			return f, fmt.Errorf("%q: want NAME=KEY", kv)
		}
		p := map[string]*string{"client": &f.Client, "time": &f.Time, "method": &f.Method, "target": &f.Target,
			"request": &f.Request, "status": &f.Status, "user_agent": &f.UserAgent}[name]
		if p == nil {
			return f, fmt.Errorf("%q: NAME is one of %s", name, strings.Join(JSONFieldNames(), ", "))
		}
		*p = key
	}
	return f, nil
}

// JSONParser parses one JSON object a line. Time is RFC 3339, the Common
// Log Format's "20/Nov/2026:10:00:00 +0000", or a number of seconds since
// the Unix epoch (fractions allowed, as nginx's $msec).
type JSONParser struct {
	f JSONFields
}

// NewJSONParser returns a parser for the given field names.
func NewJSONParser(f JSONFields) *JSONParser { return &JSONParser{f: f} }

// Parse implements Parser.
func (p *JSONParser) Parse(line []byte, e *Entry) error {
	*e = Entry{}
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		return fmt.Errorf("%w: %v", errMalformed, err)
	}
	e.Client = []byte(str(m[p.f.Client]))
	if len(e.Client) == 0 {
		return fmt.Errorf("%w: no %q", errMalformed, p.f.Client)
	}
	t, err := jsonTime(m[p.f.Time])
	if err != nil {
		return fmt.Errorf("%w: %q: %v", errMalformed, p.f.Time, err)
	}
	e.Time = t
	if target := str(m[p.f.Target]); target != "" {
		e.Method, e.Target = []byte(str(m[p.f.Method])), []byte(target)
	} else if err := splitRequest([]byte(str(m[p.f.Request])), e); err != nil {
		return err
	}
	if err := checkTarget(e.Target); err != nil {
		return err
	}
	e.Status = atoi([]byte(str(m[p.f.Status])))
	if ua := str(m[p.f.UserAgent]); ua != "-" {
		e.UserAgent = []byte(ua)
	}
	return nil
}

// str reads a JSON string or number as text.
func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}

func jsonTime(v any) (time.Time, error) {
	switch x := v.(type) {
	case float64:
		sec, frac := math.Modf(x)
		return time.Unix(int64(sec), int64(frac*1e9)).UTC(), nil
	case string:
		if t, err := time.Parse(time.RFC3339Nano, x); err == nil {
			return t.UTC(), nil
		}
		if t, err := parseCLFTime([]byte(x)); err == nil {
			return t, nil
		}
		if f, err := strconv.ParseFloat(x, 64); err == nil {
			return jsonTime(f)
		}
		return time.Time{}, fmt.Errorf("time %q: want RFC 3339, 20/Nov/2026:10:00:00 +0000 or Unix seconds", clip([]byte(x)))
	}
	return time.Time{}, fmt.Errorf("no time")
}

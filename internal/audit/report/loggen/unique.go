package loggen

import (
	"bufio"
	"io"
	"strconv"
	"time"
)

// UniqueConfig shapes a hostile log for the report's memory bounds: every
// line a report-mode denial ("deny", enforced false) with a new host, URL,
// product token, user agent, rule and robots.txt digest, so that every
// keyed table of the report sees only new keys.
type UniqueConfig struct {
	Lines int // default 40,000
	// KeyBytes is the length in octets of each unique host, product
	// token, user agent and rule text; default 2000 (the url, which holds
	// the host, and robots_url come out a little longer).
	KeyBytes int
	Start    time.Time     // time of the first line; default 2026-11-01T00:00:00Z
	Step     time.Duration // time between lines; default 1s
}

// WriteUnique writes c.Lines lines of the hostile log c to w. It is
// deterministic.
func WriteUnique(w io.Writer, c UniqueConfig) error {
	if c.Lines <= 0 {
		c.Lines = 40_000
	}
	if c.KeyBytes <= 0 {
		c.KeyBytes = 2000
	}
	if c.Start.IsZero() {
		c.Start = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	}
	if c.Step <= 0 {
		c.Step = time.Second
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	var b []byte
	for i := range c.Lines {
		id := strconv.Itoa(i)
		host := pad("h"+id+".", c.KeyBytes-len(".example"), 'x') + ".example"
		b = append(b[:0], `{"time":"`...)
		b = c.Start.Add(time.Duration(i)*c.Step).UTC().AppendFormat(b, time.RFC3339)
		b = append(b, `","client":"10.0.0.1:5000","method":"GET","url":"https://`+host+`/p`+id+`","user_agent":"`...)
		b = append(b, pad("ua"+id+"-", c.KeyBytes, 'u')...)
		b = append(b, `","decision":"deny","reason":"rule","product_token":"`...)
		b = append(b, pad("bot"+id+"-", c.KeyBytes, 'b')...)
		b = append(b, `","token_source":"user-agent","robots_url":"https://`+host+`/robots.txt","rule":"Disallow: /`...)
		b = append(b, pad("r"+id+"-", c.KeyBytes-len("Disallow: /"), 'r')...)
		b = append(b, `","rule_line":`...)
		b = strconv.AppendInt(b, int64(i%100+1), 10)
		b = append(b, `,"access_result":"successful","robots_status":200,"enforced":false,"robots_sha256":"`...)
		b = appendFakeSHA(b, uint64(i))
		b = append(b, `","status":200,"bytes":1000,"duration_ms":1.5}`+"\n"...)
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// pad returns s followed by c up to n octets (s alone when longer).
func pad(s string, n int, c byte) string {
	if len(s) >= n {
		return s
	}
	b := make([]byte, n)
	copy(b, s)
	for i := len(s); i < n; i++ {
		b[i] = c
	}
	return string(b)
}

package report

import (
	"encoding/json"
	"time"

	"github.com/robotsproxy/robotsproxy/auditlog"
)

// refView is what parseRecord reads, as encoding/json reads it.
type refView struct {
	ts                                              int64
	url, decision, reason, token, source, robotsURL string
	rule, access, sha, robotsReason                 string
	ruleLine                                        int64
	enforced                                        bool
}

// refRecord decodes the report's fields from a JSON object with
// encoding/json, one exact key at a time (encoding/json would match
// struct fields case-insensitively).
func refRecord(obj map[string]json.RawMessage) (refView, error) {
	v := refView{enforced: true}
	strs := map[string]*string{"url": &v.url, "decision": &v.decision, "reason": &v.reason, "product_token": &v.token,
		"token_source": &v.source, "robots_url": &v.robotsURL, "rule": &v.rule, "access_result": &v.access, "robots_sha256": &v.sha,
		"robots_reason": &v.robotsReason}
	for k, dst := range strs {
		if raw, ok := obj[k]; ok {
			if err := json.Unmarshal(raw, dst); err != nil {
				return v, auditlog.ErrType
			}
		}
	}
	if raw, ok := obj["enforced"]; ok {
		if err := json.Unmarshal(raw, &v.enforced); err != nil {
			return v, auditlog.ErrType
		}
	}
	if raw, ok := obj["rule_line"]; ok {
		if err := json.Unmarshal(raw, &v.ruleLine); err != nil {
			return v, auditlog.ErrType
		}
	}
	raw, ok := obj["time"]
	var ts *string
	if ok {
		if err := json.Unmarshal(raw, &ts); err != nil {
			return v, auditlog.ErrType
		}
	}
	if ts == nil {
		return v, errNoTime
	}
	t, err := time.Parse(time.RFC3339Nano, *ts)
	if err != nil {
		return v, auditlog.ErrBadTime
	}
	v.ts = t.Unix()
	if d, ok := obj["decision"]; !ok || string(d) == "null" {
		return v, errNoDecision
	}
	return v, nil
}

package signing

import (
	"context"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/egress"
)

// capture is the end of the chain: it keeps the request it was given.
type capture struct{ got *http.Request }

func (c *capture) RoundTrip(req *http.Request) (*http.Response, error) {
	c.got = req
	return &http.Response{StatusCode: 200, Body: http.NoBody, Request: req}, nil
}

func TestTransport(t *testing.T) {
	byUser, byRange, byToken, byDefault := newAgent(t), newAgent(t), newAgent(t), newAgent(t)
	rng := netip.MustParsePrefix("10.8.0.0/16")
	s := &Settings{Agents: egress.Table[*Agent]{
		Users:  map[string]*Agent{"alice": byUser},
		Ranges: map[netip.Prefix]*Agent{rng: byRange},
		Tokens: map[string]*Agent{"examplebot": byToken},
	}}
	tokensOnly := &Settings{Agents: egress.Table[*Agent]{Tokens: map[string]*Agent{"examplebot": byToken}}}
	withDefault := *s
	withDefault.Agents.Default = &byDefault
	for _, tc := range []struct {
		name     string
		settings *Settings
		x        *egress.Exchange // nil: no Exchange
		want     *Agent           // nil: unsigned
	}{
		{"no exchange", s, nil, nil},
		{"no settings", nil, &egress.Exchange{Identity: egress.Identity{Token: "ExampleBot"}}, nil},
		{"user", s, &egress.Exchange{Identity: egress.Identity{Token: "ExampleBot", User: "alice"}}, byUser},
		{"range", s, &egress.Exchange{Identity: egress.Identity{Token: "ExampleBot", Range: rng}}, byRange},
		{"token", s, &egress.Exchange{Identity: egress.Identity{Token: "EXAMPLEBOT"}}, byToken},
		{"unmapped", tokensOnly, &egress.Exchange{Identity: egress.Identity{Token: "OtherBot"}}, nil},
		{"default", &withDefault, &egress.Exchange{Identity: egress.Identity{Token: "OtherBot"}}, byDefault},
		{"report only", &withDefault, &egress.Exchange{Identity: egress.Identity{Token: "ExampleBot", User: "alice"}, ReportOnly: true}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := &capture{}
			tr := NewTransport(next, tc.settings)
			req := newRequest(t, "GET", "http://example.com/p", "", false)
			if tc.x != nil {
				req = req.WithContext(egress.NewContext(context.Background(), tc.x))
			}
			if _, err := tr.RoundTrip(req); err != nil {
				t.Fatal(err)
			}
			if req.Header.Get("Signature") != "" {
				t.Error("RoundTrip changed the caller's request")
			}
			if tc.want == nil {
				if next.got.Header.Get("Signature") != "" || next.got.Header.Get("Signature-Agent") != "" || (tc.x != nil && tc.x.Record.SignatureKeyID != "") {
					t.Errorf("signed: %v, record %+v", next.got.Header, tc.x)
				}
				return
			}
			ps := verifySig(t, next.got, DefaultLabel, tc.want.Active.Public)
			if tc.x.Record.SignatureKeyID != tc.want.Active.ID || !tc.x.Record.SignatureCreated.Equal(ps.created()) {
				t.Errorf("record %+v, want keyid %s created %v", tc.x.Record, tc.want.Active.ID, ps.created())
			}
		})
	}
}

// TestTransportStore: Store swaps the settings for the next request.
func TestTransportStore(t *testing.T) {
	a, b := newAgent(t), newAgent(t)
	next := &capture{}
	tr := NewTransport(next, &Settings{Agents: egress.Table[*Agent]{Default: &a}})
	send := func() *egress.Exchange {
		x := &egress.Exchange{Identity: egress.Identity{Token: "Bot"}}
		req := newRequest(t, "GET", "http://example.com/", "", false).WithContext(egress.NewContext(context.Background(), x))
		if _, err := tr.RoundTrip(req); err != nil {
			t.Fatal(err)
		}
		return x
	}
	if x := send(); x.Record.SignatureKeyID != a.Active.ID {
		t.Errorf("keyid %s, want %s", x.Record.SignatureKeyID, a.Active.ID)
	}
	tr.Store(&Settings{Agents: egress.Table[*Agent]{Default: &b}, Label: "other"})
	if x := send(); x.Record.SignatureKeyID != b.Active.ID {
		t.Errorf("after Store: keyid %s, want %s", x.Record.SignatureKeyID, b.Active.ID)
	}
	verifySig(t, next.got, "other", b.Active.Public)
	if (&Transport{}).Settings() != nil {
		t.Error("a zero Transport has settings")
	}
	if _, err := (&Transport{}).RoundTrip(newRequest(t, "GET", "http://example.com/", "", false)); err == nil {
		t.Error("a Transport without Next: no error")
	}
}

// TestTransportClock: created and expires come from Transport.Now, and
// the Record has the created time exactly.
func TestTransportClock(t *testing.T) {
	a := newAgent(t)
	next := &capture{}
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	tr := &Transport{Next: next, Now: func() time.Time { return at }}
	tr.Store(&Settings{Expires: 90 * time.Second, Agents: egress.Table[*Agent]{Default: &a}})
	x := &egress.Exchange{}
	req := newRequest(t, "GET", "http://example.com/", "", false).WithContext(egress.NewContext(context.Background(), x))
	if _, err := tr.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	ps := verifySig(t, next.got, DefaultLabel, a.Active.Public)
	if ps.params["created"] != at.Unix() || ps.params["expires"] != at.Unix()+90 || !x.Record.SignatureCreated.Equal(at) {
		t.Errorf("params %v, record %v; want created %d, expires +90", ps.params, x.Record.SignatureCreated, at.Unix())
	}
}

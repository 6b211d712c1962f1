package signing

import (
	"net/http"
	"testing"

	"github.com/dunglas/httpsfv"
)

// FuzzSign sends whatever a client may put in the fields Sign reads or
// adds to: Sign must not panic, and a signature it adds must verify and
// leave the client's fields' members where they were.
func FuzzSign(f *testing.F) {
	f.Add(`sig1=("@authority");created=1`, `sig1=:AAAA:`, `sig1="https://a.example"`, "", "/p", "q=1")
	f.Add(`robotsproxy=("@method")`, `robotsproxy=:AAAA:`, `robotsproxy="x", robotsproxy1="y"`, "", "/", "")
	f.Add("", "", `"https://legacy.example"`, "sha-256=:AAAA:", "/a%20b", "x=%41")
	f.Add(`(((`, "", "", "", "", "")
	agent := newAgent(f)
	f.Fuzz(func(t *testing.T, input, sig, sa, digest, path, query string) {
		req, err := http.NewRequest("GET", "http://example.com/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.URL.Path, req.URL.RawQuery = path, query
		for name, v := range map[string]string{"Signature-Input": input, "Signature": sig, "Signature-Agent": sa, "Content-Digest": digest} {
			if v != "" {
				req.Header.Set(name, v)
			}
		}
		before := req.Header.Clone()
		signed, err := Sign(req, agent, &Settings{}, nil)
		if err != nil {
			return
		}
		verifySig(t, req, signed.Label, agent.Active.Public)
		for _, name := range []string{"Signature-Input", "Signature", "Signature-Agent"} {
			old, err := httpsfv.UnmarshalDictionary(before.Values(name))
			if err != nil {
				continue
			}
			now, err := httpsfv.UnmarshalDictionary(req.Header.Values(name))
			if err != nil {
				t.Fatalf("%s %q no longer parses: %v", name, req.Header.Values(name), err)
			}
			for _, m := range old.Names() {
				a, _ := old.Get(m)
				b, ok := now.Get(m)
				sa, _ := httpsfv.Marshal(memberDict(m, a))
				sb, _ := httpsfv.Marshal(memberDict(m, b))
				if !ok || sa != sb {
					t.Fatalf("%s: the client's member %s changed: %q, now %q", name, m, sa, sb)
				}
			}
		}
	})
}

func memberDict(name string, m httpsfv.Member) *httpsfv.Dictionary {
	d := httpsfv.NewDictionary()
	if m != nil {
		d.Add(name, m)
	}
	return d
}

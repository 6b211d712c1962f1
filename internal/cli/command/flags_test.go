package command

import (
	"bytes"
	"reflect"
	"testing"
)

func TestInterspersed(t *testing.T) {
	fs := newFlagSet("x", "x", "", &bytes.Buffer{})
	fs.Bool("json", false, "")
	fs.String("format", "", "")
	for _, tt := range []struct{ in, want []string }{
		{nil, []string{"--"}},
		{[]string{"a", "-json", "b"}, []string{"-json", "--", "a", "b"}},
		{[]string{"a", "-format", "html", "b"}, []string{"-format", "html", "--", "a", "b"}},
		{[]string{"a", "--format=html", "-json=false"}, []string{"--format=html", "-json=false", "--", "a"}},
		{[]string{"-format", "--", "a"}, []string{"-format", "--", "--", "a"}}, // "--" as a value
		{[]string{"a", "--", "-json", "-"}, []string{"--", "a", "-json", "-"}}, // "--" ends the flags
		{[]string{"-", "-unknown", "v"}, []string{"-unknown", "--", "-", "v"}}, // Parse reports -unknown
		{[]string{"a", "-format"}, []string{"-format", "--", "a"}},             // Parse reports the missing value
	} {
		if got := interspersed(fs, tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("interspersed(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}

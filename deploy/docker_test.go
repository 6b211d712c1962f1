package deploy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/robotsproxy/robotsproxy/internal/config"
)

// dockerInstr is one Dockerfile instruction, continuation lines joined.
type dockerInstr struct {
	op, args string
}

// readDockerfile returns the instructions of ../Dockerfile.
func readDockerfile(t *testing.T) []dockerInstr {
	t.Helper()
	raw, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var out []dockerInstr
	cur := ""
	for _, line := range strings.Split(string(raw), "\n") {
		trimmed := strings.TrimSpace(line)
		if cur == "" && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if strings.HasSuffix(trimmed, "\\") {
			cur += strings.TrimSuffix(trimmed, "\\") + " "
			continue
		}
		cur += trimmed
		op, args, _ := strings.Cut(cur, " ")
		out = append(out, dockerInstr{strings.ToUpper(op), strings.TrimSpace(args)})
		cur = ""
	}
	return out
}

// execForm decodes a JSON-array (exec form) argument list.
func execForm(t *testing.T, what, s string) []string {
	t.Helper()
	var argv []string
	if err := json.Unmarshal([]byte(s), &argv); err != nil {
		t.Fatalf("%s %s: want the exec form [\"...\"]: %v", what, s, err)
	}
	return argv
}

// flagValue returns the value after flag in argv, "" when absent.
func flagValue(argv []string, flag string) string {
	if i := slices.Index(argv, flag); i >= 0 && i+1 < len(argv) {
		return argv[i+1]
	}
	return ""
}

var labelRE = regexp.MustCompile(`(org\.opencontainers\.image\.[a-z]+)=`)

// TestDockerfile: base images are build arguments; the image carries OCI
// labels, a HEALTHCHECK that runs the binary's healthcheck against the
// admin listener, both ports exposed, the version stamped with -ldflags
// from a VERSION build argument that agrees with the VERSION file and the
// chart's appVersion, and a container configuration that validates with
// the ENTRYPOINT's flags.
func TestDockerfile(t *testing.T) {
	ins := readDockerfile(t)
	var (
		args            = map[string]string{} // ARG name -> default, across stages
		froms, labels   []string
		exposed         []string
		health, entry   []string
		buildRun, copyC string
		firstFrom       = -1
	)
	for i, in := range ins {
		switch in.op {
		case "ARG":
			name, def, _ := strings.Cut(in.args, "=")
			if prev, ok := args[name]; ok && prev != def {
				t.Errorf("ARG %s: defaults %q and %q differ between stages", name, prev, def)
			}
			args[name] = def
			if name == "GO_IMAGE" || name == "RUN_IMAGE" {
				if firstFrom >= 0 {
					t.Errorf("ARG %s after the first FROM: a base image must be an argument of the whole file", name)
				}
			}
		case "FROM":
			if firstFrom < 0 {
				firstFrom = i
			}
			froms = append(froms, strings.Fields(in.args)[0])
		case "LABEL":
			for _, m := range labelRE.FindAllStringSubmatch(in.args, -1) {
				labels = append(labels, m[1])
			}
		case "EXPOSE":
			exposed = append(exposed, strings.Fields(in.args)...)
		case "HEALTHCHECK":
			_, cmd, ok := strings.Cut(in.args, " CMD ")
			if !ok {
				t.Fatalf("HEALTHCHECK %s: want options then CMD", in.args)
			}
			health = execForm(t, "HEALTHCHECK", strings.TrimSpace(cmd))
		case "ENTRYPOINT":
			entry = execForm(t, "ENTRYPOINT", in.args)
		case "RUN":
			if strings.Contains(in.args, "go build") {
				buildRun = in.args
			}
		case "COPY":
			if f := strings.Fields(in.args); len(f) == 2 && f[1] == "/etc/robotsproxy/config.yaml" {
				copyC = f[0]
			}
		}
	}
	if !slices.Equal(froms, []string{"${GO_IMAGE}", "${RUN_IMAGE}"}) {
		t.Errorf("FROM images: got %q, want the build arguments ${GO_IMAGE} and ${RUN_IMAGE}", froms)
	}
	for _, l := range []string{"title", "description", "source", "version", "revision"} {
		if !slices.Contains(labels, "org.opencontainers.image."+l) {
			t.Errorf("LABEL: no org.opencontainers.image.%s (got %q)", l, labels)
		}
	}

	// The version: one source.
	raw, err := os.ReadFile("../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(raw))
	if !regexp.MustCompile(`^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`).MatchString(version) {
		t.Errorf("VERSION %q: want a semantic version such as 1.2.3", version)
	}
	if args["VERSION"] != version {
		t.Errorf("ARG VERSION=%q: want the VERSION file's %q", args["VERSION"], version)
	}
	var chart struct {
		AppVersion string `yaml:"appVersion"`
	}
	var values struct {
		Image struct{ Tag string } `yaml:"image"`
	}
	readYAML(t, filepath.Join(chartDir, "Chart.yaml"), &chart)
	readYAML(t, filepath.Join(chartDir, "values.yaml"), &values)
	if chart.AppVersion != version || values.Image.Tag != "" {
		t.Errorf("chart appVersion %q, image.tag %q: want appVersion %q (the VERSION file) and the tag left to it", chart.AppVersion, values.Image.Tag, version)
	}
	for _, x := range []string{"-X main.version=${VERSION}", "-X main.commit=${COMMIT}"} {
		if !strings.Contains(buildRun, x) {
			t.Errorf("go build %q: want %q", buildRun, x)
		}
	}

	// The listeners, the ports and the health check agree.
	if len(entry) < 2 || entry[0] != "/usr/local/bin/robotsproxy" || entry[1] != "serve" {
		t.Fatalf("ENTRYPOINT %q: want robotsproxy serve", entry)
	}
	adminPort := portOf(t, flagValue(entry, "-admin-listen"))
	proxyPort := portOf(t, flagValue(entry, "-listen"))
	for _, p := range []string{proxyPort, adminPort} {
		if !slices.Contains(exposed, p) {
			t.Errorf("EXPOSE %q: want port %s", exposed, p)
		}
	}
	if len(health) < 2 || health[0] != entry[0] || health[1] != "healthcheck" {
		t.Fatalf("HEALTHCHECK CMD %q: want %s healthcheck", health, entry[0])
	}
	if addr := flagValue(health, "-addr"); addr != "127.0.0.1:"+adminPort {
		t.Errorf("HEALTHCHECK -addr %q: want 127.0.0.1:%s, the admin listener", addr, adminPort)
	}

	// The configuration the image ships starts with the ENTRYPOINT's flags.
	if copyC != "deploy/docker/config.yaml" {
		t.Errorf("COPY to /etc/robotsproxy/config.yaml: got %q, want deploy/docker/config.yaml", copyC)
	}
	cfg, err := config.DecodeFile("docker/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Listen, cfg.AdminListen = flagValue(entry, "-listen"), flagValue(entry, "-admin-listen")
	if err := cfg.Validate(); err != nil {
		t.Errorf("docker/config.yaml with the ENTRYPOINT's flags: %v", err)
	}
	if portOf(t, cfg.AdminListen) != adminPort {
		t.Errorf("admin_listen %q: want port %s", cfg.AdminListen, adminPort)
	}
}

func portOf(t *testing.T, addr string) string {
	t.Helper()
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		t.Fatalf("%q: want HOST:PORT", addr)
	}
	return addr[i+1:]
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

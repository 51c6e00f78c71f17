package vars

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/internal/cli/iostreams"
)

const declared = `apiVersion: khook.io/v1
kind: Khook
metadata: {name: t}
vars:
  CLUSTER: {type: string, format: dns-label, required: true, immutable: true, description: the cluster name}
  REPLICAS: {type: int, default: 2, description: web replicas}
  TIER: {type: string, enum: [dev, prod], default: dev}
  TOKEN: {type: string, secret: true, required_without: [PASSWORD]}
  PASSWORD: {type: string, secret: true}
  ZONES: {type: list, default: [a, b]}
rules:
  - {type: oneof_required, vars: [TOKEN, PASSWORD], message: give a token or a password}
steps:
  - name: a
    job: {image: "busybox:${TIER}"}
`

func run(t *testing.T, format string, env ...string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "khook.yaml")
	os.WriteFile(file, []byte(declared), 0o644)
	ios, out, _ := iostreams.Test("")
	ios.Environ = env
	opts := &Options{F: cmdutil.NewFactory(ios), Format: format,
		Spec: cmdutil.SpecFlags{Files: []string{file}, VarPrefix: cmdutil.DefaultVarPrefix, SecretPrefix: cmdutil.DefaultSecretPrefix}}
	if err := Run(opts); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// The table lists every input even though CLUSTER and the secrets are unset.
func TestVarsTable(t *testing.T) {
	want := "" +
		"NAME      TYPE                           REQUIRED          DEFAULT    DESCRIPTION\n" +
		"CLUSTER   string (dns-label), immutable  yes               -          the cluster name\n" +
		"REPLICAS  int                            no                2          web replicas\n" +
		"TIER      string (dev|prod)              no                dev\n" +
		"TOKEN     string, secret                 without PASSWORD  ***\n" +
		"PASSWORD  string, secret                 no                ***\n" +
		"ZONES     list                           no                [\"a\",\"b\"]\n"
	got := run(t, FormatTable, "KHOOK_SECRET_TOKEN=hunter2-secret")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
}

func TestVarsJSONSchema(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal([]byte(run(t, FormatJSONSchema)), &doc); err != nil {
		t.Fatal(err)
	}
	props := doc["properties"].(map[string]any)
	for name, want := range map[string]string{
		"CLUSTER":  `{"description":"the cluster name","maxLength":63,"pattern":"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$","type":"string","x-khook-immutable":true}`,
		"REPLICAS": `{"default":2,"description":"web replicas","type":"integer"}`,
		"TIER":     `{"default":"dev","enum":["dev","prod"],"type":"string"}`,
		"TOKEN":    `{"type":"string","writeOnly":true,"x-khook-secret":true}`,
		"ZONES":    `{"default":["a","b"],"type":"array"}`,
	} {
		got, _ := json.Marshal(props[name])
		if string(got) != want {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
	if got, _ := json.Marshal(doc["required"]); string(got) != `["CLUSTER"]` {
		t.Errorf("required: %s", got)
	}
	allOf, _ := json.Marshal(doc["allOf"])
	if !strings.Contains(string(allOf), `{"anyOf":[{"required":["TOKEN"]},{"required":["PASSWORD"]}]}`) ||
		!strings.Contains(string(allOf), `"description":"give a token or a password"`) {
		t.Errorf("allOf: %s", allOf)
	}
}

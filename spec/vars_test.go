package spec

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/khook/khook/redact"
)

func TestSubstituteForms(t *testing.T) {
	vs := &varSet{vals: map[string]string{"APP": "My-App", "TOKEN": "s3cr3t", "EMPTY": "", "TPL": "{{ .Evil }}"}, secret: map[string]bool{"TOKEN": true}, redactor: redact.New()}
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"${APP}", "My-App"},
		{"${ APP }", "My-App"},
		{"${MISSING:-fallback}", "fallback"},
		{"${APP:-fallback}", "My-App"},
		{"${EMPTY:-fallback}", ""}, // set but empty is set
		{"${MISSING:-}", ""},
		{"${APP|lower}", "my-app"},
		{"${APP | lower | trunc 3}", "my-"},
		{"${MISSING:-5|printf \"%sm\"}", "5m"},
		{"${MISSING:-a b | upper}", "A B"},
		{"${TOKEN|b64enc}", "czNjcjN0"},
		{"${APP|urlquery}", "My-App"},
		{"$${APP}", "${APP}"},
		{"$$${APP}", "$${APP}"}, // left to right: "$" then the "$${" escape
		{"$2a$10$abcdefghijklmnopqrstuv", "$2a$10$abcdefghijklmnopqrstuv"},
		{"cost $5 and $ alone $", "cost $5 and $ alone $"},
		{"{{ .Values.x }}", "{{ .Values.x }}"},
		{"${TPL}", "{{ .Evil }}"}, // values are data, never templates
		{"${TPL|upper}", "{{ .EVIL }}"},
		{"a${APP}b${APP}c", "aMy-AppbMy-Appc"},
	}
	for _, tt := range tests {
		out, _, probs := substitute("f.yaml", []byte(tt.in), vs, newPipelines())
		if len(probs) > 0 {
			t.Errorf("%q: unexpected problems: %v", tt.in, probs)
			continue
		}
		if string(out) != tt.want {
			t.Errorf("%q: got %q, want %q", tt.in, out, tt.want)
		}
	}
}

func TestSubstituteRejects(t *testing.T) {
	vs := &varSet{vals: map[string]string{"A": "x"}, secret: map[string]bool{}, varPrefix: DefaultVarPrefix}
	for in, want := range map[string]string{
		"${A":                       "unterminated",
		"${A:x}":                    "a default is written",
		"${1A}":                     "is not a variable name",
		"${}":                       "is not a variable name",
		"${A|}":                     "empty pipeline",
		"${A|nope}":                 `function "nope" not defined`,
		"${A|env \"HOME\"}":         `function "env" not defined`,
		"${A|now}":                  `function "now" not defined`,
		"${A|randAlpha 3}":          `function "randAlpha" not defined`,
		"${A|uuidv4}":               `function "uuidv4" not defined`,
		"${A|bcrypt}":               `function "bcrypt" not defined`,
		"${A|genPrivateKey}":        `function "genPrivateKey" not defined`,
		"${A|getHostByName}":        `function "getHostByName" not defined`,
		"${A|repeat 99999999}":      "too large",
		"${A|printf \"%9999999d\"}": "too large",
		"${A|indent 9999999}":       "too large",
		"${A|print \"{{\"}":         "cannot contain {{",
		"${NOPE}":                   "variable NOPE is not set",
		"${NOPE|upper}":             "variable NOPE is not set",
	} {
		_, _, probs := substitute("f.yaml", []byte(in), vs, newPipelines())
		if len(probs) != 1 || !strings.Contains(probs[0].Message, want) {
			t.Errorf("%q: want one problem containing %q, got %v", in, want, probs)
		}
	}
}

// A comment is not part of the spec: references there are left as written,
// unset or malformed. A "#" line inside a block scalar is text, substituted.
func TestCommentsAreNotSubstituted(t *testing.T) {
	vs := &varSet{vals: map[string]string{"A": "x"}, secret: map[string]bool{}, varPrefix: DefaultVarPrefix}
	for in, want := range map[string]string{
		"# uses ${VARIABLES} and ${9X}\nk: ${A}\n":                     "# uses ${VARIABLES} and ${9X}\nk: x\n",
		"k: ${A} # not ${NOPE}\n":                                      "k: x # not ${NOPE}\n",
		"k: \"a # ${A}\"\n":                                            "k: \"a # x\"\n",
		"script: |\n  # ${A}\n  echo\n# ${NOPE}\nnext: 1\n":            "script: |\n  # x\n  echo\n# ${NOPE}\nnext: 1\n",
		"- inline: |\n    # ${A}\n  k: v # ${NOPE}\n":                  "- inline: |\n    # x\n  k: v # ${NOPE}\n",
		"- |\n  # ${A}\n- b # ${NOPE}\n":                               "- |\n  # x\n- b # ${NOPE}\n",
		"run: >- # folded ${NOPE}\n  # ${A}\n\n  # ${A}\nk: 1 #${A}\n": "run: >- # folded ${NOPE}\n  # x\n\n  # x\nk: 1 #${A}\n",
	} {
		out, _, probs := substitute("f.yaml", []byte(in), vs, newPipelines())
		if len(probs) > 0 || string(out) != want {
			t.Errorf("%q: got %q, %v; want %q", in, out, probs, want)
		}
	}
}

// Positions of fields after a substitution — on the same line, or after a
// value that spans several lines — point at the raw file.
func TestPositionsAfterSubstitution(t *testing.T) {
	dir := t.TempDir()
	raw := "apiVersion: khook.io/v1\n" +
		"kind: Khook\n" +
		"metadata: {name: ${NAME}}\n" +
		"steps:\n" +
		"  - name: a\n" +
		"    job:\n" +
		"      image: ${IMG}\n" +
		"      args: [${ARGS}]\n" +
		"      namespace: ${LONG:-default}\n" +
		"      serviceAccount: ${SA}\n" +
		"    retries: ${R}\n"
	file := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(file, []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(LoadOptions{Files: []string{file}, Set: []string{
		"NAME=n",
		"IMG=busybox:1.37",
		"ARGS=\"one\",\n        \"two\",\n        \"three\"", // three lines
		"SA=Not_Valid",
		"R=-1",
	}})
	var probs Problems
	if !errors.As(err, &probs) {
		t.Fatalf("want problems, got %v", err)
	}
	got := []string{}
	for _, p := range probs {
		got = append(got, p.Pos.String()+" "+p.Path)
	}
	want := []string{
		file + ":10:23 steps.0.job.serviceAccount",
		file + ":11:14 steps.0.retries",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("positions (-want +got):\n%s", diff)
	}

	// And a valid spec: every recorded position maps to where the field is.
	s, err := Load(LoadOptions{Files: []string{file}, Set: []string{"NAME=n", "IMG=busybox:1.37", "ARGS=\"one\",\n  \"two\"", "SA=sa", "R=1", "LONG=kube-system"}})
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"metadata.name":              ":3:18",
		"steps.0.job.image":          ":7:14",
		"steps.0.job.args.0":         ":8:14",
		"steps.0.job.args.1":         ":8:14",
		"steps.0.job.namespace":      ":9:18",
		"steps.0.job.serviceAccount": ":10:23",
		"steps.0.retries":            ":11:14",
		"steps.0.job":                ":6:5",
	} {
		if got := s.PosOf(path).String(); got != file+want {
			t.Errorf("%s: got %s, want %s%s", path, got, file, want)
		}
	}
}

func TestVariablePrecedence(t *testing.T) {
	dir := t.TempDir()
	varFile := filepath.Join(dir, "vars.yaml")
	os.WriteFile(varFile, []byte("A: from-file\nB: from-file\nPORT: 08080\n"), 0o644)
	opts := LoadOptions{
		Set:          []string{"A=from-set"},
		VarFiles:     []string{varFile},
		Environ:      []string{"KHOOK_VAR_A=var", "KHOOK_VAR_B=var", "KHOOK_VAR_C=var", "KHOOK_VAR_D=var", "KHOOK_SECRET_C=secret", "MY_E=custom", "KHOOK_VAR_=ignored"},
		VarPrefix:    DefaultVarPrefix,
		SecretPrefix: DefaultSecretPrefix,
		Redactor:     redact.New(),
	}
	vs, probs := gatherVars(opts)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	want := map[string]string{"A": "from-set", "B": "from-file", "C": "secret", "D": "var", "PORT": "08080"}
	if diff := cmp.Diff(want, vs.vals); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if !vs.secret["C"] || vs.secret["D"] {
		t.Errorf("secret flags wrong: %v", vs.secret)
	}
	opts.VarPrefix, opts.SecretPrefix = "MY_", "NONE_"
	vs, _ = gatherVars(opts)
	if vs.vals["E"] != "custom" || vs.vals["D"] != "" {
		t.Errorf("custom prefix: got %v", vs.vals)
	}
}

func TestVarFileProblems(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("A: [1]\n9x: y\n"), 0o644)
	list := filepath.Join(dir, "list.yaml")
	os.WriteFile(list, []byte("- a\n"), 0o644)
	_, probs := gatherVars(LoadOptions{VarFiles: []string{bad, list, filepath.Join(dir, "missing.yaml")}, Set: []string{"novalue"}})
	got := []string{}
	for _, p := range probs {
		got = append(got, p.String())
	}
	want := []string{
		bad + ":1:4: variable A must be a scalar value, not a list or map",
		bad + `:2:1: "9x" is not a variable name (letters, digits and _, not starting with a digit)`,
		list + ":1:1: a var file must be a flat map of NAME: value",
		filepath.Join(dir, "missing.yaml") + ": cannot read var file: open " + filepath.Join(dir, "missing.yaml") + ": no such file or directory",
		`--set "novalue": expected NAME=value with NAME made of letters, digits and _`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// Acceptance: a secret and its pipeline outputs are masked, and a
// validation error on a line holding them never shows them.
func TestSecretsNeverInProblems(t *testing.T) {
	red := redact.New()
	_, err := Load(LoadOptions{Files: []string{"testdata/invalid-secret-in-error.yaml"}, Environ: []string{"KHOOK_SECRET_TOKEN=s3cr3t"}, Redactor: red})
	if err == nil {
		t.Fatal("want problems")
	}
	b64 := base64.StdEncoding.EncodeToString([]byte("s3cr3t"))
	msg := err.Error()
	for _, secret := range []string{"s3cr3t", b64} {
		if strings.Contains(msg, secret) {
			t.Errorf("problems show %q:\n%s", secret, msg)
		}
		if got := red.String("x " + secret + " y"); got != "x *** y" {
			t.Errorf("redactor does not mask %q: %q", secret, got)
		}
	}
	if !strings.Contains(msg, `namespace "***_ns"`) {
		t.Errorf("want the masked value in the message, got:\n%s", msg)
	}
}

// Credentials written in the spec (URL userinfo, auth.password) are
// registered with the redactor even when they are not variables.
func TestCredentialsRegistered(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.yaml")
	os.WriteFile(file, []byte(`apiVersion: khook.io/v1
kind: Khook
metadata: {name: creds}
steps:
  - name: a
    helm: {chart: app, repo: "https://user:pa%24%24word@charts.example.com"}
  - name: b
    helm:
      chart: oci://registry.example.com/charts/app:1.0.0
      auth: {username: AWS, password: ecr-token-value}
`), 0o644)
	red := redact.New()
	if _, err := Load(LoadOptions{Files: []string{file}, Redactor: red}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"pa$$word", "ecr-token-value"} {
		if got := red.String(s); got != redact.Mask {
			t.Errorf("%q not registered: %q", s, got)
		}
	}
}

func TestMissingVariablesAllReported(t *testing.T) {
	_, err := loadTestdata(t, "testdata/invalid-variables.yaml")
	var probs Problems
	if !errors.As(err, &probs) {
		t.Fatal(err)
	}
	n := 0
	for _, p := range probs {
		if strings.Contains(p.Message, "is not set") {
			n++
		}
	}
	// Not the ${HOME} in a comment.
	if n != 5 {
		t.Errorf("want 5 missing variables reported, got %d:\n%v", n, probs)
	}
}

// A var file is opened by LoadOptions.Decrypt (sops.Open in the CLI and
// khook ci, tested there): what it says was encrypted gives secret
// variables, its error is a problem at the file. Without one, an encrypted
// file is refused, never read as plain variables.
func TestEncryptedVarFile(t *testing.T) {
	file := filepath.Join("..", "test", "e2e", "testdata", "sops", "values.enc.yaml")
	open := func(name string, data []byte, r *redact.Redactor) ([]byte, bool, error) {
		if name != file || !strings.Contains(string(data), "ENC[") {
			return data, false, nil
		}
		r.Add("Values-S3cret-9f2b")
		return []byte("greeting: Values-S3cret-9f2b\n"), true, nil
	}
	vs, probs := gatherVars(LoadOptions{VarFiles: []string{file}, Redactor: redact.New(), Decrypt: open})
	if len(probs) > 0 || vs.vals["greeting"] != "Values-S3cret-9f2b" || !vs.secret["greeting"] {
		t.Fatalf("vars %v secret %v, problems %v", vs.vals, vs.secret, probs)
	}
	failing := func(name string, _ []byte, _ *redact.Redactor) ([]byte, bool, error) {
		return nil, true, fmt.Errorf("cannot decrypt %s: no available key opens it", name)
	}
	_, probs = gatherVars(LoadOptions{VarFiles: []string{file}, Redactor: redact.New(), Decrypt: failing})
	if len(probs) != 1 || probs[0].Pos.File != file || !strings.Contains(probs[0].Message, "no available key opens it") {
		t.Errorf("a decryption that fails: %v", probs)
	}
	vs, probs = gatherVars(LoadOptions{VarFiles: []string{file}, Redactor: redact.New()})
	if len(probs) == 0 || !strings.Contains(probs.Error(), "variable sops must be a scalar value") {
		t.Errorf("an encrypted var file read with no Decrypt: vars %v, problems %v", vs.vals, probs)
	}
}

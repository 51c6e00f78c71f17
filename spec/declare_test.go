package spec

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/khook/khook/redact"
)

// declSpec wraps a vars:/rules: block in a minimal spec; the step uses
// ${REGION} so a default reaching it can be checked.
func declSpec(blocks string) string {
	return "apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: t}\n" + blocks +
		"steps:\n  - name: a\n    job: {image: busybox, env: {REGION: \"${REGION}\"}}\n"
}

func loadDecl(t *testing.T, blocks string, set []string, env ...string) (*Spec, error) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "khook.yaml")
	if err := os.WriteFile(file, []byte(declSpec(blocks)), 0o644); err != nil {
		t.Fatal(err)
	}
	return Load(LoadOptions{Files: []string{file}, Set: set, Environ: env, Redactor: redact.New()})
}

// problemLines strips the temp directory from "dir/khook.yaml:4:3: msg".
func problemLines(err error) []string {
	if err == nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if i := strings.Index(l, "khook.yaml:"); i >= 0 {
			l = l[i:]
		}
		out = append(out, l)
	}
	return out
}

const region = "vars:\n  REGION: {type: string, default: eu-west-1}\n"

// Every schema-level rule: all reported at once, before any value is looked at.
func TestDeclarationSchemaRules(t *testing.T) {
	blocks := `vars:
  REGION: {type: string, default: eu-west-1}
  A: {required: true}
  B: {type: text}
  C: {type: string, required: true, default: x}
  D: {type: int, format: hostname}
  E: {type: string, format: phone}
  F: {type: string, required_with: [NOPE]}
  G: {type: string, required: true, required_without: [A]}
  H: {type: int, pattern: "^a"}
  I: {type: string, pattern: "(("}
  J: {type: int, default: many}
  K: {type: string, enum: [a, b], default: c}
  L: {type: string, secret: true, default: x}
  M: {type: list, default: x}
  N: {type: string, required_with: [N]}
  O: {type: string, requird: true}
  P: {type: string, secret: true, immutable: true}
  Q: {type: list, enum: [a]}
  R: {type: bool, default: "yes"}
  S: {type: string, format: dns-label, default: Not_A_Label}
  1X: {type: string}
rules:
  - {type: oneof_required, vars: [A]}
  - {type: allof_required, vars: [A, B]}
  - {type: oneof_required, vars: [A, MISSING]}
`
	_, err := loadDecl(t, blocks, []string{"A=1"})
	want := []string{
		`khook.yaml:6:3: vars.A.type: is required (write type: string, type: int, type: bool, type: duration, type: list, type: map)`,
		`khook.yaml:7:13: vars.B.type: unknown type "text" (one of string, int, bool, duration, list, map)`,
		`khook.yaml:8:46: vars.C: required: true cannot have a default (a required variable is always given) (drop required: true, or drop the default)`,
		`khook.yaml:9:26: vars.D.format: format applies only to type: string, not int (use type: string)`,
		`khook.yaml:10:29: vars.E.format: unknown format "phone" (one of cidr, datetime, dns-label, email, hostname, ip, semver, url, uuid)`,
		`khook.yaml:11:36: vars.F.required_with: NOPE is not a declared variable (declare it under vars:)`,
		`khook.yaml:12:31: vars.G: required: true cannot be combined with required_with or required_without (drop required: true, or the conditional requirement)`,
		`khook.yaml:13:27: vars.H.pattern: pattern applies only to type: string, not int (use type: string)`,
		"khook.yaml:14:30: vars.I.pattern: invalid pattern: error parsing regexp: missing closing ): `((` (patterns are Go regular expressions (RE2))",
		`khook.yaml:15:27: vars.J.default: the default is not an integer`,
		`khook.yaml:16:44: vars.K.default: the default is not one of a, b`,
		`khook.yaml:17:44: vars.L: a secret cannot have a default (it would be written in the spec) (drop the default: a secret comes from its KHOOK_SECRET_ variable)`,
		`khook.yaml:18:28: vars.M.default: the default must be a list`,
		`khook.yaml:19:36: vars.N.required_with: a variable cannot refer to itself`,
		`khook.yaml:20:21: unknown field "requird" in vars.O (did you mean "required"?)`,
		`khook.yaml:21:46: vars.P: a secret cannot be immutable (its value would be kept in the state record) (drop immutable: true)`,
		`khook.yaml:22:25: vars.Q.enum: enum applies to scalar types, not list`,
		`khook.yaml:23:28: vars.R.default: the default is not a bool (write true or false)`,
		`khook.yaml:24:49: vars.S.default: the default is not a valid dns-label`,
		`khook.yaml:25:3: vars.1X: "1X" is not a variable name (letters, digits and _, not starting with a digit)`,
		`khook.yaml:27:5: rules.0.vars: a oneof_required rule needs at least two variables, got 1 (list two or more variables)`,
		`khook.yaml:28:5: rules.1.type: unknown rule type "allof_required" (the only rule type is oneof_required)`,
		`khook.yaml:29:5: rules.2.vars: MISSING is not a declared variable (declare it under vars:)`,
	}
	if diff := cmp.Diff(want, problemLines(err)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// Every value rule, with conditional requirements judged on what the user
// provided: a default never counts as provided.
func TestDeclarationValueRules(t *testing.T) {
	blocks := `vars:
  REGION: {type: string, default: eu-west-1}
  NAME: {type: string, required: true, description: the cluster name}
  REPLICAS: {type: int}
  DEBUG: {type: bool}
  TIMEOUT: {type: duration}
  ZONES: {type: list}
  LABELS: {type: map}
  HOST: {type: string, format: hostname}
  URL: {type: string, format: url}
  MAIL: {type: string, format: email}
  IP: {type: string, format: ip}
  NET: {type: string, format: cidr}
  ID: {type: string, format: uuid}
  VERSION: {type: string, format: semver}
  AT: {type: string, format: datetime}
  LABEL: {type: string, format: dns-label}
  TIER: {type: string, enum: [dev, prod]}
  CODE: {type: string, pattern: "^[A-Z]{3}$"}
  TOKEN: {type: string, secret: true}
  CERT: {type: string, required_with: [KEY]}
  KEY: {type: string, default: k}
  BACKUP: {type: string, required_without: [S3, GCS]}
  S3: {type: string}
  GCS: {type: string, default: gs://b}
  ISSUER: {type: string}
  CLUSTER_ISSUER: {type: string, default: letsencrypt}
rules:
  - type: oneof_required
    vars: [ISSUER, CLUSTER_ISSUER]
    message: either ISSUER or CLUSTER_ISSUER must be set
`
	set := []string{"REPLICAS=three", "DEBUG=yes", "TIMEOUT=5 minutes", "ZONES=a: b", "LABELS=[a]", "HOST=-bad-", "URL=not a url",
		"MAIL=nobody", "IP=1.2.3", "NET=10.0.0.0", "ID=123", "VERSION=1.2", "AT=2026-01-01", "LABEL=Upper", "TIER=qa", "CODE=ab1", "TOKEN=from-set"}
	_, err := loadDecl(t, blocks, set)
	want := []string{
		`khook.yaml:6:3: variable NAME is required (the cluster name) (pass --set NAME=..., put it in a --var-file, or set KHOOK_VAR_NAME)`,
		`khook.yaml:7:3: variable REPLICAS: the value "three" from --set is not an integer (type int)`,
		`khook.yaml:8:3: variable DEBUG: the value "yes" from --set is not a bool (write true or false) (type bool)`,
		`khook.yaml:9:3: variable TIMEOUT: the value "5 minutes" from --set is not a duration such as 90s, 5m or 1h30m (type duration)`,
		`khook.yaml:10:3: variable ZONES: the value "a: b" from --set is not a list (write [a, b] or ["a","b"]) (type list)`,
		`khook.yaml:11:3: variable LABELS: the value "[a]" from --set is not a map (write {a: 1} or {"a":1}) (type map)`,
		`khook.yaml:12:3: variable HOST: the value "-bad-" from --set is not a valid hostname (format hostname)`,
		`khook.yaml:13:3: variable URL: the value "not a url" from --set is not a valid url (format url)`,
		`khook.yaml:14:3: variable MAIL: the value "nobody" from --set is not a valid email (format email)`,
		`khook.yaml:15:3: variable IP: the value "1.2.3" from --set is not a valid ip (format ip)`,
		`khook.yaml:16:3: variable NET: the value "10.0.0.0" from --set is not a valid cidr (format cidr)`,
		`khook.yaml:17:3: variable ID: the value "123" from --set is not a valid uuid (format uuid)`,
		`khook.yaml:18:3: variable VERSION: the value "1.2" from --set is not a valid semver (format semver)`,
		`khook.yaml:19:3: variable AT: the value "2026-01-01" from --set is not a valid datetime (format datetime)`,
		`khook.yaml:20:3: variable LABEL: the value "Upper" from --set is not a valid dns-label (format dns-label)`,
		`khook.yaml:21:3: variable TIER: the value "qa" from --set is not one of dev, prod`,
		`khook.yaml:22:3: variable CODE: the value "ab1" from --set does not match the pattern ^[A-Z]{3}$`,
		`khook.yaml:23:3: variable TOKEN is a secret but was given by --set; secrets come only from KHOOK_SECRET_TOKEN (set KHOOK_SECRET_TOKEN in the environment instead)`,
		// KEY and GCS have defaults, which do not count as provided: CERT is
		// not required, BACKUP is.
		`khook.yaml:26:3: variable BACKUP is required because none of S3, GCS is given (pass --set BACKUP=..., put it in a --var-file, or set KHOOK_VAR_BACKUP)`,
		// CLUSTER_ISSUER's default does not satisfy the rule either.
		`khook.yaml:32:5: either ISSUER or CLUSTER_ISSUER must be set (set one of them with --set NAME=value, --var-file or KHOOK_VAR_NAME)`,
	}
	if diff := cmp.Diff(want, problemLines(err)); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}

	// The same declarations, with provided values: KEY given makes CERT
	// required; S3 given satisfies BACKUP; a secret from KHOOK_SECRET_ is fine.
	_, err = loadDecl(t, blocks, []string{"NAME=eu-1", "KEY=x", "S3=s3://b", "ISSUER=ca"}, "KHOOK_SECRET_TOKEN=s3cr3t-value")
	want = []string{`khook.yaml:24:3: variable CERT is required because KEY is given (pass --set CERT=..., put it in a --var-file, or set KHOOK_VAR_CERT)`}
	if diff := cmp.Diff(want, problemLines(err)); diff != "" {
		t.Errorf("provided (-want +got):\n%s", diff)
	}

	// Valid values of every type and format load, and reach ${} as text.
	good := []string{"NAME=eu-1", "REPLICAS=3", "DEBUG=true", "TIMEOUT=5m", "ZONES=[a, b]", `LABELS={"a":"1"}`, "HOST=api.example.com",
		"URL=https://example.com/x", "MAIL=a@example.com", "IP=::1", "NET=10.0.0.0/8", "ID=123e4567-e89b-12d3-a456-426614174000",
		"VERSION=v1.2.3-rc.1+build.5", "AT=2026-01-01T10:00:00Z", "LABEL=eu-1", "TIER=prod", "CODE=ABC", "CERT=c", "KEY=k", "S3=s3://b", "CLUSTER_ISSUER=le"}
	s, err := loadDecl(t, blocks, good, "KHOOK_SECRET_TOKEN=s3cr3t-value")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Steps[0].Job.Env["REGION"].Value; got != "eu-west-1" {
		t.Errorf("${REGION} with a declared default = %q, want eu-west-1", got)
	}
	for name, want := range map[string]string{"REGION": "eu-west-1/default", "TOKEN": "s3cr3t-value/environment KHOOK_SECRET_TOKEN", "ZONES": "[a, b]/--set", "ISSUER": "/unset", "BACKUP": "/unset"} {
		v := s.Declared.Lookup(name)
		if got := v.Value + "/" + v.Source; got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
}

// A secret given the wrong way is never quoted, and the error is redacted.
func TestDeclaredSecretNeverPrinted(t *testing.T) {
	_, err := loadDecl(t, region+"  TOKEN: {type: string, secret: true, pattern: \"^x\"}\n", []string{"TOKEN=hunter2-pw"})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error: %v", err)
	}
	_, err = loadDecl(t, region+"  TOKEN: {type: string, secret: true, pattern: \"^x\"}\n", nil, "KHOOK_SECRET_TOKEN=hunter2-pw")
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "variable TOKEN: the value from environment KHOOK_SECRET_TOKEN does not match") {
		t.Errorf("error: %v", err)
	}
}

// A later file's declaration overrides the fields it writes.
func TestDeclarationsMergeAcrossOverlays(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.yaml")
	over := filepath.Join(dir, "prod.yaml")
	os.WriteFile(base, []byte(declSpec(region+"  SIZE: {type: int, default: 1, description: nodes}\n")), 0o644)
	os.WriteFile(over, []byte("vars:\n  REGION: {default: us-east-1}\n  SIZE: {required: true, default: null}\n"), 0o644)
	_, err := Load(LoadOptions{Files: []string{base, over}})
	if err == nil || !strings.Contains(err.Error(), "prod.yaml:3:3: variable SIZE is required (nodes)") {
		t.Fatalf("error: %v", err)
	}
	s, err := Load(LoadOptions{Files: []string{base, over}, Set: []string{"SIZE=3"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Steps[0].Job.Env["REGION"].Value; got != "us-east-1" {
		t.Errorf("REGION = %q", got)
	}
}

func TestImmutableNeedsState(t *testing.T) {
	_, err := loadDecl(t, region+"  CLUSTER: {type: string, default: a, immutable: true}\n", nil)
	if want := "khook.yaml:6:50: vars.CLUSTER.immutable: an immutable input is kept in the state record, but this spec keeps none"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error: %v\nwant %s", err, want)
	}
	if _, err := loadDecl(t, "state: {namespace: kube-system}\n"+region+"  CLUSTER: {type: string, default: a, immutable: true}\n", nil); err != nil {
		t.Error(err)
	}
}

// Declarations never panic, and a loaded spec's declarations resolved.
func FuzzDeclarations(f *testing.F) {
	for _, file := range []string{"../examples/inputs/khook.yaml", "testdata/overlay/base.yaml"} {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(declSpec(region + "  X: {type: map, default: {a: [1]}}\n  Y: {type: list, enum: [a]}\nrules:\n  - {type: oneof_required, vars: [X, Y]}\n")))
	f.Add([]byte("vars:\nrules:\nvars: [\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := Load(LoadOptions{Files: []string{"-"}, Stdin: bytes.NewReader(in), Set: []string{"X={}"}, Redactor: redact.New()})
		if err == nil && s.Declared != nil {
			for _, v := range s.Declared.Vars {
				if v.Source == "" {
					t.Fatalf("%s resolved with no source", v.Name)
				}
			}
			if _, err := s.Declared.JSONSchema(); err != nil {
				t.Fatal(err)
			}
		}
	})
}

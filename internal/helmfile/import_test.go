package helmfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func fixtureEnv(root string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		if name == "ROOT_DIR" {
			return root, true
		}
		return "", false
	}
}

// The bootstrap pattern: requiredEnv ROOT_DIR values paths, a .gotmpl
// values file reading a Flux HelmRelease's spec.values, hooks applying a
// kustomize folder and CRDs, a CRD wait loop, a needs entry with a wrong
// namespace, an env default.
func TestImportBootstrap(t *testing.T) {
	root, _ := filepath.Abs("testdata/bootstrap")
	res := importFaithful(t, root, "bootstrap/helmfile.yaml.gotmpl", Options{Env: fixtureEnv(root)},
		"- file: ../kubernetes/apps/kube-system/cilium/app/helmrelease.yaml\n          path: spec.values",
		"for: condition=Established\n      \"on\": crd/ciliumloadbalancerippools.cilium.io",
		"- kustomize: ../kubernetes/apps/kube-system/cilium/app",
		"- file: ../kubernetes/crds/gateway/crds.yaml",
		"clusterName: ${CLUSTER_NAME}",
		`default: "home"`,
		"rollout:\n      restart: deployment/flux-operator",
		"needs default/coredns: no release coredns is in namespace \"default\"",
	)
	spec := string(res.Spec)
	if strings.Contains(spec, root+"/kubernetes") {
		t.Errorf("the spec holds absolute paths of this checkout:\n%s", spec)
	}
	byName := map[string]*Release{}
	for _, r := range res.Releases {
		byName[r.Resolved.Name] = r
	}
	cm := byName["cert-manager"].Resolved
	want := Resolved{Name: "cert-manager", Namespace: "cert-manager", Chart: "jetstack/cert-manager", Version: "v1.19.1",
		Needs: []string{"kube-system/coredns"}, Installed: true,
		Values: map[string]any{"crds": map[string]any{"enabled": true}, "replicaCount": 2, "clusterName": "home"}}
	want.Values, cm.Values = jsonish(want.Values).(map[string]any), jsonish(cm.Values).(map[string]any)
	if d := cmp.Diff(want, cm); d != "" {
		t.Errorf("cert-manager resolved (-want +got):\n%s", d)
	}
	cilium := byName["cilium"]
	if got := cilium.Resolved.Values["name"]; got != "cilium" {
		t.Errorf("cilium's values from its HelmRelease: name %v", got)
	}
	if d := cmp.Diff([]string{"cilium", "cilium-post-1", "cilium-post-2", "cilium-post-3"}, cilium.Steps); d != "" {
		t.Errorf("cilium's steps (-want +got):\n%s", d)
	}
	if len(res.Files) != 0 {
		t.Errorf("files generated for HelmRelease values: %v", res.Files)
	}
}

// importFaithful imports file of dir with opts, wants a faithful verdict
// and each of wants in the spec, and returns what it imported.
func importFaithful(t *testing.T, dir, file string, opts Options, wants ...string) *Result {
	t.Helper()
	res, err := Import(dir, file, opts)
	if err != nil {
		t.Fatal(err)
	}
	if v := res.Verdict(); v != Faithful {
		t.Errorf("verdict %s, want faithful\n%s", v, res.Spec)
	}
	for _, want := range wants {
		if !strings.Contains(string(res.Spec), want) {
			t.Errorf("spec lacks %q\n%s", want, res.Spec)
		}
	}
	return res
}

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Bad input is one sentence at FILE:LINE.
func TestImportBadInput(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"template error", map[string]string{"helmfile.yaml.gotmpl": "releases:\n  - name: a\n    chart: ./a\n    version: {{ requiredEnv \"NOPE_X\" }}\n"},
			"helmfile.yaml.gotmpl:4: the template fails: requiredEnv: required env var `NOPE_X` is not set"},
		{"yaml after rendering", map[string]string{"helmfile.yaml.gotmpl": "releases:\n  - name: a\n    chart: [\n"},
			"helmfile.yaml.gotmpl:3: it is not YAML after rendering"},
		{"missing values file", map[string]string{"helmfile.yaml": "releases:\n  - name: a\n    chart: ./a\n    values:\n      - missing.yaml\n", "a/Chart.yaml": "name: a\n"},
			"helmfile.yaml:5: release a: the values file missing.yaml cannot be read: no such file or directory"},
		{"exec refused", map[string]string{"helmfile.yaml.gotmpl": "releases:\n  - name: a\n\n    chart: {{ exec \"echo\" (list \"x\") }}\n"},
			"helmfile.yaml.gotmpl:4: the template fails: exec \"echo\" runs a command while rendering; pass --allow-exec to run it"},
		{"templates in a plain helmfile", map[string]string{"helmfile.yaml": "# {{ a comment }}\n{{ if true }}\nreleases: []\n{{ end }}\n"},
			"helmfile.yaml:2: {{ if true }} is a template, but helmfile v1 renders templates only in a file ending .gotmpl: rename helmfile.yaml to helmfile.yaml.gotmpl"},
		// YAML reads {{ .Values.replicas }} as a flow map: the release,
		// not the YAML, fails, and the line is the template's.
		{"a template value in a plain helmfile", map[string]string{"helmfile.yaml": "environments:\n  default:\n    values: [{replicas: 2}]\n---\nreleases:\n  - name: a\n    chart: ./a\n    set:\n      - name: replicas\n        value: {{ .Values.replicas }}\n", "a/Chart.yaml": "name: a\n"},
			"helmfile.yaml:10: {{ .Values.replicas }} is a template, but helmfile v1 renders templates only in a file ending .gotmpl: rename helmfile.yaml to helmfile.yaml.gotmpl"},
		// An environment's inline value (CARV-ICS-FORTH/knot's host:
		// {{ requiredEnv "KNOT_HOST" }}): the inline values, not the YAML,
		// fail, and the line is the template's.
		{"a template in an inline environment value of a plain helmfile", map[string]string{"helmfile.yaml": "environments:\n  default:\n    values:\n    - ingress:\n        host: {{ requiredEnv \"KNOT_HOST\" }}\n---\nreleases: []\n"},
			"helmfile.yaml:5: {{ requiredEnv \"KNOT_HOST\" }} is a template, but helmfile v1 renders templates only in a file ending .gotmpl: rename helmfile.yaml to helmfile.yaml.gotmpl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, tc.files)
			file := "helmfile.yaml"
			if _, ok := tc.files["helmfile.yaml.gotmpl"]; ok {
				file = "helmfile.yaml.gotmpl"
			}
			_, err := Import(dir, file, Options{Env: func(string) (string, bool) { return "", false }})
			var ie *InputError
			if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("got %v\nwant an InputError starting %q", err, tc.want)
			}
			if strings.Count(err.Error(), "\n") > 0 {
				t.Errorf("more than one line: %q", err)
			}
		})
	}
}

// Environments, bases, templates with inherit, parts, set with indexes
// and file:, secrets, inline values before a file, and a partial verdict
// that names what was not carried.
func TestImportEnvironmentsTemplates(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"environments.yaml": "environments:\n  default:\n    values: [env/default.yaml]\n  prod:\n    values: [env/prod.yaml]\n",
		"env/default.yaml":  "replicas: 1\nns: apps\nenabled: false\n",
		"env/prod.yaml":     "replicas: 3\nns: prod\nenabled: true\n",
		"helmfile.yaml.gotmpl": `bases: [environments.yaml]
---
repositories:
  - name: bitnami
    url: https://charts.bitnami.com/bitnami
templates:
  default: &default
    namespace: {{ .Values.ns }}
    chart: bitnami/{{"{{"}} .Release.Name {{"}}"}}
    values:
      - common.yaml
releases:
  - name: redis
    inherit: [{template: default}]
    version: 1.2.3
    values:
      - replicas: {{ .Values.replicas }}
      - redis.yaml
    secrets: [secrets.yaml]
    set:
      - name: list[0].x
        value: "y,z"
      - name: cert
        file: cert.pem
  - name: nginx
    <<: *default
    condition: enabled
  - name: extra
    chart: bitnami/extra
    postRenderer: ./kustomize.sh
`,
		"common.yaml":  "common: true\n",
		"redis.yaml":   "replicas: 5\nredis: true\n",
		"secrets.yaml": "password: x\n",
		"cert.pem":     "PEM",
	})
	res, err := Import(dir, "helmfile.yaml.gotmpl", Options{Environment: "prod"})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*Release{}
	for _, r := range res.Releases {
		byName[r.Resolved.Name] = r
	}
	redis := byName["redis"]
	if redis == nil || redis.Resolved.Namespace != "prod" || redis.Resolved.Chart != "bitnami/redis" {
		t.Fatalf("redis: %+v\n%s", redis, res.Spec)
	}
	wantVals := map[string]any{"common": true, "replicas": 5, "redis": true, "cert": "PEM", "list": []any{map[string]any{"x": "y,z"}}}
	if d := cmp.Diff(jsonish(wantVals), jsonish(redis.Resolved.Values)); d != "" {
		t.Errorf("redis values (-want +got):\n%s", d)
	}
	if redis.Verdict != Faithful {
		t.Errorf("redis: %s %v", redis.Verdict, redis.NotCarried)
	}
	if nginx := byName["nginx"]; nginx == nil || nginx.Verdict != Faithful || nginx.Step != "nginx" {
		t.Errorf("nginx (condition true in prod): %+v", nginx)
	}
	extra := byName["extra"]
	if extra.Verdict != Partial || len(extra.NotCarried) != 1 || !strings.Contains(extra.NotCarried[0].String(), "helmfile.yaml.gotmpl:30: release extra: postRenderer ./kustomize.sh: a post-renderer command changes what is installed") {
		t.Errorf("extra: %s %v", extra.Verdict, extra.NotCarried)
	}
	if res.Verdict() != Partial {
		t.Errorf("import verdict %s, want partial", res.Verdict())
	}
	spec := string(res.Spec)
	for _, want := range []string{"- file: ./secrets.yaml", "- file: ./redis.values-2.yaml", "NOT carried over (1)"} {
		if !strings.Contains(spec, want) {
			t.Errorf("spec lacks %q\n%s", want, spec)
		}
	}
	if strings.Contains(spec, "not carried: not carried") || strings.Contains(spec, "not converted") {
		t.Errorf("stutter in\n%s", spec)
	}
	// default environment: the condition is false, nginx gets no step.
	res, err = Import(dir, "helmfile.yaml.gotmpl", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Releases {
		if r.Resolved.Name == "nginx" && (r.Step != "" || r.Resolved.Installed) {
			t.Errorf("nginx in default: %+v", r)
		}
	}
}

func BenchmarkImportBootstrap(b *testing.B) {
	root, _ := filepath.Abs("testdata/bootstrap")
	for i := 0; i < b.N; i++ {
		if _, err := Import(root, "bootstrap/helmfile.yaml.gotmpl", Options{Env: fixtureEnv(root)}); err != nil {
			b.Fatal(err)
		}
	}
}

// helmfile.d runs its files in order: each file's releases need the
// previous file's; sub-helmfiles get their values; create namespace and
// label hooks become steps; a missing file under missingFileHandler: Warn
// is skipped as helmfile skips it.
func TestImportHelmfileD(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.d/00-crds.yaml": `releases:
  - name: crds
    chart: ./charts/crds
    missingFileHandler: Warn
    values: [absent.yaml]
    hooks:
      - events: [presync]
        command: kubectl
        args: [create, namespace, infra]
      - events: [postsync]
        command: kubectl
        args: [label, namespace, infra, team=platform, --overwrite]
`,
		"helmfile.d/10-apps.yaml.gotmpl": `helmfiles:
  - path: sub/helmfile.yaml.gotmpl
    values: [{tier: {{ "gold" }}}]
releases:
  - name: app
    chart: ./charts/app
`,
		"helmfile.d/sub/helmfile.yaml.gotmpl": "environments:\n  default:\n    values: [{tier: bronze}]\n---\nreleases:\n  - name: sub\n    chart: ../../charts/app\n    values: [{tier: {{ .Values.tier }}}]\n",
		"charts/crds/Chart.yaml":              "apiVersion: v2\nname: crds\nversion: 0.1.0\n",
		"charts/app/Chart.yaml":               "apiVersion: v2\nname: app\nversion: 0.1.0\n",
	})
	res, err := Import(dir, ".", Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec := string(res.Spec)
	if res.Verdict() != Faithful {
		t.Errorf("verdict %s\n%s", res.Verdict(), spec)
	}
	steps := map[string]*Release{}
	for _, r := range res.Releases {
		steps[r.Resolved.Name] = r
	}
	if d := cmp.Diff([]string{"crds", "crds-pre-1", "crds-post-2"}, steps["crds"].Steps); d != "" {
		t.Errorf("crds steps (-want +got):\n%s", d)
	}
	if got := steps["sub"].Resolved.Values["tier"]; got != "gold" {
		t.Errorf("sub-helmfile values: tier %v", got)
	}
	for _, want := range []string{
		"name: infra",
		"target: namespace/infra",
		"team: platform",
		// helmfile v1.8.0 runs the files of a helmfile.d in parallel.
		"  - name: sub\n    helm:",
		"  - name: app\n    needs:\n      - sub",
		"chart: ./charts/app",
		"absent.yaml: missing, skipped as helmfile's missingFileHandler Warn says",
	} {
		if !strings.Contains(spec, want) {
			t.Errorf("spec lacks %q\n%s", want, spec)
		}
	}
}

// A hook whose step the spec refuses costs the hook, not the release; the
// steps that needed it need what it needed.
func TestImportRefusedHookStep(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"helmfile.yaml": `releases:
  - name: a
    chart: oci://r.example/a
    hooks:
      - events: [postsync]
        command: kubectl
        args: [wait, '--for=jsonpath={.status', deploy/x]
  - name: b
    chart: oci://r.example/b
    needs: [a]
`})
	res, err := Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	verdicts := map[string]Verdict{}
	for _, r := range res.Releases {
		verdicts[r.Resolved.Name] = r.Verdict
	}
	if d := cmp.Diff(map[string]Verdict{"a": Partial, "b": Faithful}, verdicts); d != "" {
		t.Errorf("verdicts (-want +got):\n%s\n%s", d, res.Spec)
	}
	if !strings.Contains(string(res.Spec), "  - name: b\n    needs:\n      - a\n") || !strings.Contains(string(res.Spec), `helmfile.yaml:5: release a: a hook's step a-post-1: the khook spec refuses it`) {
		t.Errorf("spec:\n%s", res.Spec)
	}
}

// A decrypted environment secret is never written in plaintext.
func TestImportEnvironmentSecretNotWritten(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml.gotmpl": "environments:\n  default:\n    secrets: [env-secrets.yaml]\n---\nreleases:\n  - name: a\n    chart: oci://r.example/a\n    values:\n      - token: {{ .Values.token }}\n",
		"env-secrets.yaml":     "token: s3cr3t-value\n",
	})
	// Under a credential's key it is a secret variable (trial 46n's S1).
	res, err := Import(dir, "helmfile.yaml.gotmpl", Options{})
	if err != nil || strings.Contains(everything(res), "s3cr3t") || !strings.Contains(string(res.Spec), "token: ${TOKEN|toJson}") {
		t.Fatalf("got %v, want the secret written as a variable", err)
	}
	// Under any other key it is that variable too: its own key says it is
	// a credential (trial 46s's D5).
	write(t, dir, map[string]string{
		"helmfile.yaml.gotmpl": "environments:\n  default:\n    secrets: [env-secrets.yaml]\n---\nreleases:\n  - name: a\n    chart: oci://r.example/a\n    values:\n      - note: {{ .Values.token }}\n",
	})
	res, err = Import(dir, "helmfile.yaml.gotmpl", Options{})
	if err != nil || strings.Contains(everything(res), "s3cr3t") || !strings.Contains(string(res.Spec), "note: ${TOKEN|toJson}") {
		t.Fatalf("got %v, want the secret written as a variable:\n%s", err, res.Spec)
	}
	// A secret whose key names no credential has no variable: refused.
	write(t, dir, map[string]string{
		"helmfile.yaml.gotmpl": "environments:\n  default:\n    secrets: [env-secrets.yaml]\n---\nreleases:\n  - name: a\n    chart: oci://r.example/a\n    values:\n      - note: {{ .Values.motd }}\n",
		"env-secrets.yaml":     "motd: s3cr3t-value\n",
	})
	_, err = Import(dir, "helmfile.yaml.gotmpl", Options{})
	if err == nil || !strings.Contains(err.Error(), "would be written in plaintext") || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("got %v, want a refusal that does not quote the secret", err)
	}
}

// onedr0p's and carldanley's patterns: defaultInherit of a template whose
// chart comes from a file, kubectl wait --for=create on several CRDs, a
// shell for loop of until kubectl wait retries, helmDefaults.args.
func TestImportDefaultInheritWaitsLoops(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"default.yaml": `templates:
  default:
    chart: '{{ (fromYaml (readFile (printf "charts/%s.yaml" .Release.Name))).chart }}'
    version: '{{ (fromYaml (readFile (printf "charts/%s.yaml" .Release.Name))).version }}'
`,
		"charts/cilium.yaml":        "chart: oci://quay.io/cilium/charts/cilium\nversion: 1.18.4\n",
		"config/kustomization.yaml": "resources: []\n",
		"helmfile.yaml": `bases: [default.yaml]
defaultInherit: default
helmDefaults:
  args: [--include-crds]
releases:
  - name: cilium
    namespace: kube-system
    hooks:
      - events: [postsync]
        command: kubectl
        args: [wait, --for=create, crd/a.cilium.io, crd/b.cilium.io, --timeout=2m]
      - events: [postsync]
        command: sh
        args:
          - -ec
          - |
            for crd in \
              c.cilium.io \
              d.cilium.io; do
              until kubectl wait --for=condition=Established "crd/${crd}" --timeout=10s; do
                sleep 2
              done
            done
            kubectl apply --server-side --kustomize ./config
`})
	spec := string(importFaithful(t, dir, "helmfile.yaml", Options{},
		"chart: oci://quay.io/cilium/charts/cilium",
		"for: cel=true\n      \"on\": crd/b.cilium.io",
		"for: condition=Established\n      \"on\": crd/d.cilium.io",
		"- kustomize: ./config",
	).Spec)
	if strings.Count(spec, "timeout: 2m") != 2 || strings.Contains(spec, "timeout: 10s") {
		t.Errorf("want kubectl's --timeout on the two --for=create waits only:\n%s", spec)
	}
}

// The bootstrap "crds" helmfile (helmDefaults.args --include-crds
// --no-hooks, run as helmfile template | kubectl apply of the CRDs) is
// crds: only with its values; --no-hooks alone, or with --skip-crds, is
// not carried.
func TestImportCRDsOnly(t *testing.T) {
	for _, tc := range []struct {
		name, args string
		want       Verdict
		crdsOnly   bool
	}{
		{"template extraction", "[--include-crds, --no-hooks]", Faithful, true},
		{"in one string", "['--include-crds --no-hooks']", Faithful, true},
		{"no hooks alone", "[--no-hooks]", Partial, false},
		{"skip crds too", "[--include-crds, --no-hooks, --skip-crds]", Partial, false},
		{"include crds alone", "[--include-crds]", Faithful, false},
		{"a post-renderer selecting the CRDs", "[--include-crds]\n  postRenderer: yq\n  postRendererArgs: [ea, 'select(.kind == \"CustomResourceDefinition\")', '-']", Faithful, true},
		{"a post-renderer deleting the CRDs", "[--include-crds]\n  postRenderer: yq\n  postRendererArgs: [ea, 'del(select(.kind == \"CustomResourceDefinition\"))', '-']", Partial, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, map[string]string{"helmfile.yaml": `helmDefaults:
  args: ` + tc.args + `
  wait: true
releases:
  - name: kube-prometheus-stack
    namespace: observability
    chart: oci://ghcr.io/prometheus-community/charts/kube-prometheus-stack
    version: 79.1.0
    values:
      - crds:
          upgradeJob:
            enabled: true
`})
			res, err := Import(dir, "helmfile.yaml", Options{})
			if err != nil {
				t.Fatal(err)
			}
			spec := string(res.Spec)
			if v := res.Verdict(); v != tc.want {
				t.Errorf("verdict %s, want %s\n%s", v, tc.want, spec)
			}
			if got := strings.Contains(spec, "\n      crds: only\n"); got != tc.crdsOnly {
				t.Errorf("crds: only written: %v, want %v\n%s", got, tc.crdsOnly, spec)
			}
			if tc.crdsOnly && (strings.Contains(spec, "createNamespace") || strings.Contains(spec, "wait: true") || !strings.Contains(spec, "upgradeJob")) {
				t.Errorf("want crds: only with the values and no createNamespace or wait:\n%s", spec)
			}
		})
	}
}

// A file a template reads and cannot find is named as written, a path
// under ROOT_DIR with ${ROOT_DIR}, never the checkout's (or a temporary)
// directory, and the failure is said once through tpl.
func TestImportMissingReadFileNamedAsWritten(t *testing.T) {
	for _, tc := range []struct{ chart, want string }{
		{`{{ (fromYaml (readFile (printf "%s/apps/%s.yaml" (requiredEnv "ROOT_DIR") .Release.Name))).chart }}`,
			`helmfile.yaml:4: release a chart: the template fails: readFile: "${ROOT_DIR}/apps/a.yaml": no such file or directory`},
		{`{{ tpl (readFile "chart.tpl") . }}`,
			`helmfile.yaml:4: release a chart: the template fails: tpl: readFile: "apps/a.yaml": no such file or directory`},
	} {
		dir := t.TempDir()
		write(t, dir, map[string]string{
			"helmfile.yaml": "releases:\n  - name: a\n    namespace: x\n    chart: '" + tc.chart + "'\n",
			"chart.tpl":     `{{ readFile "apps/a.yaml" }}`,
		})
		_, err := Import(dir, "helmfile.yaml", Options{Env: fixtureEnv(dir)})
		if err == nil || err.Error() != tc.want {
			t.Errorf("got %v\nwant %s", err, tc.want)
		}
	}
}

// jsonPatches and strategicMergePatches (inline or from a file) become a
// kustomize post-renderer; a post-renderer command is not carried, except
// the CRD select of a CRDs-only helmfile.
func TestImportPatchesPostRenderer(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"smp.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: b\nspec:\n  replicas: 2\n",
		"helmfile.yaml": `releases:
  - name: a
    namespace: x
    chart: oci://r.example/a
    version: 1.0.0
    jsonPatches:
      - target: {group: apps, version: v1, kind: Deployment, name: a}
        patch:
          - op: remove
            path: /spec/template/spec/containers/0/env/0
    strategicMergePatches:
      - smp.yaml
  - name: b
    namespace: x
    chart: oci://r.example/b
    version: 1.0.0
    postRenderer: ./fix.sh
`})
	res, err := Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec := string(res.Spec)
	for _, want := range []string{
		"postRenderers:\n        - kustomize:\n            patches:\n              - patch: |\n                  - op: remove\n                    path: /spec/template/spec/containers/0/env/0\n                target:\n                  group: apps\n",
		"              - patch: |\n                  apiVersion: apps/v1\n                  kind: Deployment\n",
	} {
		if !strings.Contains(spec, want) {
			t.Errorf("spec lacks %q\n%s", want, spec)
		}
	}
	verdicts := map[string]Verdict{}
	for _, r := range res.Releases {
		verdicts[r.Resolved.Name] = r.Verdict
	}
	if verdicts["a"] != Faithful || verdicts["b"] != Partial {
		t.Errorf("verdicts %v, want a faithful (patches carried), b partial (a post-renderer command)\n%s", verdicts, spec)
	}
}

// exec "yq" reading a Flux HelmRelease's values runs nothing without
// --allow-exec: the import evaluates select, paths and an assignment from
// env() itself; any other yq expression is refused as exec is. A cleanup
// hook is a step after the release, as helmfile sync runs it.
func TestImportExecYQNative(t *testing.T) {
	hr := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: a}\nspec:\n  values:\n    replicas: 2\n    sync: {path: old}\n"
	for _, tc := range []struct{ expr, want, err string }{
		{`select(.kind == \"HelmRelease\").spec.values`, "replicas: 2\nsync:\n  path: old\n", ""},
		{`.spec.values.sync.path = \"clusters/\" + env(CLUSTER) + \"/x\" | select(.kind == \"HelmRelease\").spec.values`, "replicas: 2\nsync:\n  path: clusters/main/x\n", ""},
		{`.spec.values | keys`, "", `exec "yq" runs a command while rendering`},
	} {
		dir := t.TempDir()
		write(t, dir, map[string]string{
			"hr.yaml":            hr,
			"values.yaml.gotmpl": `{{ exec "yq" (list "` + tc.expr + `" "hr.yaml") }}`,
			"helmfile.yaml": `releases:
  - name: a
    namespace: x
    chart: oci://r.example/a
    version: 1.0.0
    values: [values.yaml.gotmpl]
    hooks:
      - events: [cleanup]
        command: kubectl
        args: [apply, --server-side, -f, hr.yaml]
`})
		env := func(n string) (string, bool) {
			if n == "CLUSTER" {
				return "main", true
			}
			return "", false
		}
		res, err := Import(dir, "helmfile.yaml", Options{Env: env})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: got %v, want %q", tc.expr, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		got, _ := toYaml(res.Releases[0].Resolved.Values)
		if got != tc.want {
			t.Errorf("%s: values\n%s\nwant\n%s", tc.expr, got, tc.want)
		}
		if res.Verdict() != Faithful || !strings.Contains(string(res.Spec), "- file: ./hr.yaml") {
			t.Errorf("%s: verdict %s, want faithful with the cleanup hook's apply step\n%s", tc.expr, res.Verdict(), res.Spec)
		}
	}
}

// An unset requiredEnv used in values (a token the task file provides)
// becomes a required ${NAME}; used where a variable cannot go (a version)
// the import fails as helmfile does, at its line.
func TestImportUnsetRequiredEnv(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"helmfile.yaml.gotmpl": `releases:
  - name: a
    namespace: x
    chart: oci://r.example/a
    version: 1.0.0
    setString:
      - name: auth.token
        value: {{ requiredEnv "TOKEN_X" }}
    values:
      - header: Bearer {{ requiredEnv "TOKEN_X" }}
`})
	res, err := Import(dir, "helmfile.yaml.gotmpl", Options{Env: fixtureEnv(dir)})
	if err != nil {
		t.Fatal(err)
	}
	spec := string(res.Spec)
	for _, want := range []string{"token: ${TOKEN_X}", "header: Bearer ${TOKEN_X}", "  TOKEN_X: {type: string, secret: true,"} {
		if !strings.Contains(spec, want) {
			t.Errorf("spec lacks %q\n%s", want, spec)
		}
	}
	if res.Verdict() != Faithful || strings.Contains(spec, "__khook") {
		t.Errorf("verdict %s, want faithful with no placeholder left\n%s", res.Verdict(), spec)
	}
	write(t, dir, map[string]string{"helmfile.yaml.gotmpl": "releases:\n  - name: a\n    namespace: x\n    chart: oci://r.example/a\n    version: {{ requiredEnv \"TOKEN_X\" }}\n"})
	_, err = Import(dir, "helmfile.yaml.gotmpl", Options{Env: fixtureEnv(dir)})
	if want := "helmfile.yaml.gotmpl:5: the template fails: requiredEnv: required env var `TOKEN_X` is not set"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// kubectl patch -p becomes a patch step; helm dependency build of the
// release's own local chart is what the helm step does (dependencyUpdate
// without a Chart.lock).
func TestImportPatchAndDependencyHooks(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"chart/Chart.yaml": "apiVersion: v2\nname: chart\nversion: 0.1.0\n",
		"helmfile.yaml": `releases:
  - name: argocd
    namespace: argocd
    chart: ./chart
    hooks:
      - events: [prepare]
        command: helm
        args: [dependency, build, ./chart]
      - events: [postsync]
        command: kubectl
        args: [patch, namespace, argocd, -p, '{"metadata":{"labels":{"infra":"true"}}}', --type, merge]
`})
	res, err := Import(dir, "helmfile.yaml", Options{})
	if err != nil {
		t.Fatal(err)
	}
	spec := string(res.Spec)
	for _, want := range []string{"dependencyUpdate: true", "patch:\n      target: namespace/argocd\n      type: merge\n      patch:\n        metadata:\n          labels:\n            infra: \"true\"\n"} {
		if !strings.Contains(spec, want) {
			t.Errorf("spec lacks %q\n%s", want, spec)
		}
	}
	if res.Verdict() != Faithful {
		t.Errorf("verdict %s, want faithful\n%s", res.Verdict(), spec)
	}
}

// A missing values file under ROOT_DIR is named ${ROOT_DIR}/…, not by the
// checkout's directory.
func TestImportMissingValuesFileNamedAsWritten(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"helmfile.yaml": "releases:\n  - name: a\n    namespace: x\n    chart: oci://r.example/a\n    values: ['{{ requiredEnv \"ROOT_DIR\" }}/v/missing.yaml']\n"})
	_, err := Import(dir, "helmfile.yaml", Options{Env: fixtureEnv(dir)})
	if want := "helmfile.yaml:5: release a: the values file ${ROOT_DIR}/v/missing.yaml cannot be read: no such file or directory"; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// An unset requiredEnv that only decides the rendering cannot become a
// variable: the import fails as helmfile does.
func TestImportUnsetRequiredEnvInCondition(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{"helmfile.yaml.gotmpl": "releases:\n  - name: a\n    namespace: x\n    chart: oci://r.example/a\n    version: 1.0.0\n{{ if eq (requiredEnv \"CLUSTER_X\") \"main\" }}\n    installed: false\n{{ end }}\n"})
	_, err := Import(dir, "helmfile.yaml.gotmpl", Options{Env: fixtureEnv(dir)})
	if want := "helmfile.yaml.gotmpl:6: the template fails: requiredEnv: required env var `CLUSTER_X` is not set"; err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// A helmfile whose environments are its clusters and has no "default":
// helmfile renders "default" with no values, so an import without
// --environment fails where the template reads one; the error says so,
// names the environments there are and the flag, not the missing key
// (or an unset requiredEnv a second try would meet first).
func TestImportNoDefaultEnvironment(t *testing.T) {
	root, _ := filepath.Abs("testdata/clusters")
	const file = "bootstrap/helmfile.yaml.gotmpl"
	unset := func(string) (string, bool) { return "", false }
	for _, tc := range []struct {
		name string
		env  string
		vars func(string) (string, bool)
		want string
	}{
		{"no environment chosen", "", fixtureEnv(root),
			`bootstrap/helmfile.yaml.gotmpl:40: .Environment.Values.cluster.dnsIP has no value because this helmfile defines no "default" environment (the one used without --environment), only cluster01 and cluster02: choose one with --environment NAME (-e NAME)`},
		{"ROOT_DIR unset too", "", unset,
			`bootstrap/helmfile.yaml.gotmpl:40: .Environment.Values.cluster.dnsIP has no value because this helmfile defines no "default" environment`},
		{"an environment it does not define", "cluster03", fixtureEnv(root),
			`bootstrap/helmfile.yaml.gotmpl:40: environment "cluster03" is not defined (helmfile refuses it too): this helmfile defines only cluster01 and cluster02: choose one with --environment NAME (-e NAME)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Import(root, file, Options{Environment: tc.env, Env: tc.vars})
			var ie *InputError
			if !errors.As(err, &ie) || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("got %v\nwant one line starting %q", err, tc.want)
			}
		})
	}

	// With an environment chosen, it imports as before.
	res, err := Import(root, file, Options{Environment: "cluster01", Env: fixtureEnv(root)})
	if err != nil {
		t.Fatal(err)
	}
	if v := res.Verdict(); v != Faithful {
		t.Errorf("verdict %s, want faithful\n%s", v, res.Spec)
	}
	got := map[string]any{}
	for _, r := range res.Releases {
		got[r.Resolved.Name] = jsonish(r.Resolved.Values)
	}
	want := jsonish(map[string]any{
		"cilium": map[string]any{"cluster": map[string]any{"name": "cluster01", "id": 1},
			"ipam":           map[string]any{"operator": map[string]any{"clusterPoolIPv4PodCIDRList": []any{"10.42.0.0/16"}}},
			"k8sServiceHost": "10.0.1.10", "k8sServicePort": 6443, "kubeProxyReplacement": true},
		"coredns": map[string]any{"service": map[string]any{"clusterIP": "10.43.0.10"}},
	})
	if d := cmp.Diff(want, jsonish(got)); d != "" {
		t.Errorf("values with -e cluster01 (-want +got):\n%s", d)
	}
}

// The same in a values template of a plain helmfile, and no hint where
// the helmfile names no environments (the key is simply missing).
func TestImportNoDefaultEnvironmentValuesTemplate(t *testing.T) {
	for _, tc := range []struct {
		name, envs, want string
	}{
		{"environments without default", "environments:\n  dev: {}\n  prod:\n    values: [{replicas: 3}]\n",
			`values.yaml.gotmpl:2: .Values.replicas has no value because this helmfile defines no "default" environment (the one used without --environment), only dev and prod: choose one with --environment NAME (-e NAME)`},
		{"no environments", "",
			`values.yaml.gotmpl:2: the template fails: map has no entry for key "replicas"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, map[string]string{
				"helmfile.yaml":      tc.envs + "releases:\n  - name: a\n    chart: ./a\n    values: [values.yaml.gotmpl]\n",
				"a/Chart.yaml":       "name: a\n",
				"values.yaml.gotmpl": "image: a\nreplicas: {{ .Values.replicas }}\n",
			})
			_, err := Import(dir, "helmfile.yaml", Options{Env: func(string) (string, bool) { return "", false }})
			if err == nil || err.Error() != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
}

// helmfile refuses an environment the helmfile does not define (`environment
// "prd" is not defined`), "default" excepted, even when no template reads
// its values: an import of such a run would be one helmfile never makes.
func TestImportUndefinedEnvironment(t *testing.T) {
	const release = "releases:\n  - name: a\n    chart: ./a\n"
	for _, tc := range []struct {
		name, helmfile, env, want string
	}{
		{"two defined", "environments:\n  dev: {}\n  prod: {}\n---\n" + release, "prd",
			`helmfile.yaml: environment "prd" is not defined (helmfile refuses it too): this helmfile defines only dev and prod: choose one with --environment NAME (-e NAME)`},
		{"one defined", "environments:\n  dev: {}\n---\n" + release, "prd",
			`helmfile.yaml: environment "prd" is not defined (helmfile refuses it too): this helmfile defines only dev: choose it with --environment dev (-e dev)`},
		{"none defined", release, "prd",
			`helmfile.yaml: environment "prd" is not defined (helmfile refuses it too): this helmfile defines no environments: leave out --environment (-e)`},
		{"default may be undefined", "environments:\n  dev: {}\n---\n" + release, "default", ""},
		{"default by omission", "environments:\n  dev: {}\n---\n" + release, "", ""},
		{"a defined one", "environments:\n  dev: {}\n  prod: {}\n---\n" + release, "prod", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, map[string]string{"helmfile.yaml": tc.helmfile, "a/Chart.yaml": "name: a\n"})
			res, err := Import(dir, "helmfile.yaml", Options{Environment: tc.env})
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if v := res.Verdict(); v != Faithful {
					t.Errorf("verdict %s, want faithful", v)
				}
				return
			}
			var ie *InputError
			if !errors.As(err, &ie) || err.Error() != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}

	// A sub-helmfile renders with its parent's environment: only the
	// parent defines it.
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml":     "environments:\n  prod: {}\n---\nhelmfiles:\n  - sub/helmfile.yaml\n",
		"sub/helmfile.yaml": release,
		"sub/a/Chart.yaml":  "name: a\n",
	})
	if _, err := Import(dir, "helmfile.yaml", Options{Environment: "prod"}); err != nil {
		t.Errorf("a sub-helmfile without environments: %v", err)
	}
}

// helmfile skips a helmfile.d file that does not define the chosen
// environment (pkg/app visitStates) and fails only when no file defines
// it: the skipped file's releases are not imported, and a note says why.
func TestImportHelmfileDUndefinedEnvironment(t *testing.T) {
	crds := "releases:\n  - name: crds\n    chart: ./charts/crds\n"
	apps := "environments:\n  dev: {}\n  prod: {}\n---\nreleases:\n  - name: app\n    chart: ./charts/app\n"
	charts := map[string]string{
		"charts/crds/Chart.yaml": "apiVersion: v2\nname: crds\nversion: 0.1.0\n",
		"charts/app/Chart.yaml":  "apiVersion: v2\nname: app\nversion: 0.1.0\n",
	}
	files := func(m map[string]string) map[string]string {
		for k, v := range charts {
			m[k] = v
		}
		return m
	}

	dir := t.TempDir()
	write(t, dir, files(map[string]string{"helmfile.d/00-crds.yaml": crds, "helmfile.d/01-apps.yaml": apps}))
	res, err := Import(dir, ".", Options{Environment: "prod"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range res.Releases {
		names = append(names, r.Resolved.Name)
	}
	if d := cmp.Diff([]string{"app"}, names); d != "" {
		t.Errorf("releases (-want +got):\n%s", d)
	}
	if v := res.Verdict(); v != Faithful {
		t.Errorf("verdict %s, want faithful (helmfile runs the same)", v)
	}
	var notes []string
	for _, n := range res.Info {
		notes = append(notes, n.String())
	}
	want := []string{`helmfile.d/00-crds.yaml: environment "prod" is not defined in this file: helmfile skips a helmfile.d file without it, so none of its releases is imported`}
	if d := cmp.Diff(want, notes); d != "" {
		t.Errorf("notes (-want +got):\n%s", d)
	}
	if !strings.Contains(string(res.Spec), want[0]) {
		t.Errorf("the spec's header lacks the note\n%s", res.Spec)
	}

	// No file defines it: refused, as helmfile fails when no file runs.
	dir = t.TempDir()
	write(t, dir, files(map[string]string{"helmfile.d/00-crds.yaml": crds, "helmfile.d/01-apps.yaml": apps}))
	_, err = Import(dir, ".", Options{Environment: "prd"})
	var ie *InputError
	if msg := `helmfile.d/01-apps.yaml: environment "prd" is not defined (helmfile refuses it too): this helmfile defines only dev and prod: choose one with --environment NAME (-e NAME)`; !errors.As(err, &ie) || err.Error() != msg {
		t.Errorf("got  %v\nwant %s", err, msg)
	}
}

// Without --environment, helmfile renders the environment HELMFILE_ENVIRONMENT
// names (helmfile v1.8.0 pkg/config (*GlobalImpl).Env), and so does the
// import; --environment wins over it, and the result says which environment
// and whence (trial 46m's D1: replicated's wg-easy selects its environment
// this way, and the import rendered default, exit 0).
func TestImportHelmfileEnvironmentVariable(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"helmfile.yaml.gotmpl": "environments:\n  default:\n    values:\n      - replicas: 1\n  staging:\n    values:\n      - replicas: 2\n  prod:\n    values:\n      - replicas: 3\n---\nreleases:\n  - name: app\n    namespace: app\n    chart: oci://r.example/app\n    version: 1.0.0\n    values:\n      - env: {{ .Environment.Name }}\n        replicas: {{ .Values.replicas }}\n",
	})
	for _, tc := range []struct {
		flag, variable string
		want, wantFrom string
		replicas       int
	}{
		{"", "", "default", EnvDefault, 1},
		{"", "prod", "prod", EnvVariable, 3},
		{"staging", "prod", "staging", EnvFlag, 2},
		{"staging", "", "staging", EnvFlag, 2},
	} {
		env := map[string]string{}
		if tc.variable != "" {
			env["HELMFILE_ENVIRONMENT"] = tc.variable
		}
		res, err := Import(dir, "helmfile.yaml.gotmpl", Options{Environment: tc.flag, Env: func(n string) (string, bool) { v, ok := env[n]; return v, ok }})
		if err != nil {
			t.Fatalf("-e %q, HELMFILE_ENVIRONMENT=%q: %v", tc.flag, tc.variable, err)
		}
		got := res.Releases[0].Resolved.Values
		if res.Environment != tc.want || res.EnvironmentFrom != tc.wantFrom || got["env"] != tc.want || got["replicas"] != tc.replicas {
			t.Errorf("-e %q, HELMFILE_ENVIRONMENT=%q: environment %s from %s, values %v; want %s from %s", tc.flag, tc.variable, res.Environment, res.EnvironmentFrom, got, tc.want, tc.wantFrom)
		}
		if !strings.Contains(string(res.Spec), "(environment "+tc.want+")") {
			t.Errorf("the spec's header does not name environment %s:\n%s", tc.want, res.Spec)
		}
	}
	// An environment the helmfile does not define, from the variable, is
	// refused as helmfile refuses it, saying where it came from.
	_, err := Import(dir, "helmfile.yaml.gotmpl", Options{Env: func(n string) (string, bool) { return "qa", n == "HELMFILE_ENVIRONMENT" }})
	if err == nil || !strings.Contains(err.Error(), `environment "qa" is not defined`) || !strings.Contains(err.Error(), "HELMFILE_ENVIRONMENT") {
		t.Errorf("got %v, want environment qa refused, naming HELMFILE_ENVIRONMENT", err)
	}
}

package scriptapply

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/khook/khook/test/chartsrc"
	"github.com/khook/khook/test/helmcli"
	"github.com/khook/khook/test/reporoot"
)

// A script case: a corpus script at its path in a copy of its repository,
// with stand-ins for the files it reads.
type scriptCase struct {
	name   string
	corpus string // directory under test/testdata/scripts, or "" for testdata here
	script string // the script's path in its repository
	dir    string // where it runs, in the repository ("" is the root)
	// inputs writes what testdata/inputs/<name> cannot hold (charts, a URL).
	inputs func(t *testing.T, repo string)
	// partial: the import exits 1, naming what it does not carry.
	partial bool
	// importSays are what the import prints for each expected difference.
	importSays []string
	// scriptFails is what the script prints when it fails as written.
	scriptFails string
	// want are the differences expected (importSays names each).
	want []string
}

var cases = []scriptCase{
	{
		name: "immudb", corpus: "immudb", script: "K8s-deployment/Charts/immudb/install.sh", dir: "K8s-deployment/Charts/immudb",
		inputs: func(t *testing.T, repo string) {
			app := filepath.Join(repo, "K8s-deployment/Charts/immudb")
			copyChart(t, "demo", app)
			writeFiles(t, app, map[string]string{
				"resource-values.yaml":          "replicaCount: 1\n",
				"secrets/immudb-admin-password": "admin-password-of-the-test\n",
				"secrets/password":              "hook-password-of-the-test\n",
			})
		},
		// khook never copies a file's content into the spec.
		partial: true,
		importSays: []string{
			"install.sh:2: not carried over: kubectl create secret generic immudb-admin-password --from-file=secrets/immudb-admin-password -n immudb",
			"install.sh:3: not carried over: kubectl create secret generic hook-secret --from-file=secrets/password -n immudb",
		},
		want: []string{
			"Secret immudb/hook-secret was made by the script, not by khook's apply.",
			"Secret immudb/immudb-admin-password was made by the script, not by khook's apply.",
		},
	},
	{
		name: "bakito-jti", corpus: "bakito-jti", script: "testdata/e2e/installChart.sh",
		inputs: func(t *testing.T, repo string) {
			copyChart(t, "demo", filepath.Join(repo, "chart"))
			writeFiles(t, repo, map[string]string{"testdata/e2e/e2e-values.yaml": "replicaCount: 1\nmessage: hello from jti\n"})
		},
		// --timeout 60 is Helm 2's form: Helm 3 and 4 refuse it, so the
		// script as written installs nothing; the import writes 60s and
		// is partial there.
		partial:     true,
		importSays:  []string{"installChart.sh:4: not carried over: --timeout 60: helm refuses it (time: missing unit in duration), so the script's command fails as written; the step takes 60s, as Helm 2 read it: write --timeout 60s in the script"},
		scriptFails: `invalid argument "60" for "--timeout" flag`,
	},
	{
		// The until loop that polls for the ServiceMonitor CRD is read-only;
		// khook's apply waits for a CRD it applied before the next step.
		name: "kube-prometheus", corpus: "kube-prometheus", script: "scripts/monitoring-deploy.sh",
	},
	{
		// A for (( )) retry, carried once as the retry it is; kustomize
		// is kubectl's (kustomizeShim).
		name: "kubeflow-knative", corpus: "kubeflow", script: "tests/knative_install.sh",
		importSays: []string{"knative_install.sh:5: warning: for ((i=1; i<=3; i++)); do …: the loop runs the same 2 step(s) 3 times (a retry): carried once"},
	},
	{
		name: "gloo", corpus: "gloo", script: "projects/gateway2/install.sh",
		inputs: func(t *testing.T, repo string) {
			writeFiles(t, repo, map[string]string{
				// It makes the kind cluster; the test's control plane is that.
				"ci/kind/setup-kind.sh": "#!/bin/bash\necho 'the cluster is the test control plane'\n",
				"test/kubernetes/e2e/tests/manifests/common-recommendations.yaml":      "replicaCount: 1\n",
				"test/kubernetes/e2e/tests/manifests/profiles/kubernetes-gateway.yaml": "message: hello from gateway2\n",
			})
			must(t, os.Chmod(filepath.Join(repo, "ci/kind/setup-kind.sh"), 0o755))
			tgz := chartsrc.Package(t, "demo", t.TempDir())
			must(t, os.MkdirAll(filepath.Join(repo, "_test"), 0o755))
			must(t, os.Rename(tgz, filepath.Join(repo, "_test/gloo-1.0.0-ci1.tgz")))
		},
	},
	{
		// kubectl's generators: the objects kubectl makes, written by the import
		name: "generators", script: "install.sh",
	},
	{
		name: "platform", script: "install.sh",
		inputs: func(t *testing.T, repo string) {
			r := chartsrc.NewHTTPRepo(t, chartsrc.Auth{}, "demo")
			b, err := os.ReadFile(filepath.Join(repo, "install.sh"))
			must(t, err)
			must(t, os.WriteFile(filepath.Join(repo, "install.sh"), bytes.ReplaceAll(b, []byte("HTTP_REPO_URL"), []byte(r.URL)), 0o755))
		},
	},
}

// kustomizeShim serves `kustomize build DIR` as `kubectl kustomize DIR`:
// kubectl links kustomize's own build command (v5.8.1 at Kubernetes
// v1.37.1), so no third tool is built for the scripts that pipe it.
const kustomizeShim = `#!/bin/sh
[ "$1" = build ] || { echo "kustomize: only build is served here (kubectl kustomize)" >&2; exit 2; }
shift
exec kubectl kustomize "$@"
`

// TestScriptAndImportMakeTheSameObjects: each script, run as written with
// helm and kubectl, and the spec khook imports from it, applied by khook,
// make the same objects, but for the differences the import itself names.
// The cases run one after another: each side's snapshot before and after
// is then the case's alone.
func TestScriptAndImportMakeTheSameObjects(t *testing.T) {
	helm := helmcli.Binary(t)
	bin := t.TempDir()
	must(t, os.Symlink(helm, filepath.Join(bin, "helm")))
	must(t, os.Symlink(kubectlBin, filepath.Join(bin, "kubectl")))
	must(t, os.WriteFile(filepath.Join(bin, "kustomize"), []byte(kustomizeShim), 0o755))
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			scriptKube.DumpLogsOnFailure(t)
			khookKube.DumpLogsOnFailure(t)
			repo := t.TempDir()
			src := filepath.Join(reporoot.MustDir(), "test", "testdata", "scripts", tc.corpus)
			if tc.corpus == "" {
				src = filepath.Join(reporoot.MustDir(), "test", "scriptapply", "testdata", tc.name)
			}
			copyTree(t, src, repo)
			if inputs := filepath.Join("testdata", "inputs", tc.name); exists(inputs) {
				copyTree(t, inputs, repo)
			}
			if tc.inputs != nil {
				tc.inputs(t, repo)
			}
			work := filepath.Join(repo, tc.dir)
			script, err := filepath.Rel(work, filepath.Join(repo, tc.script))
			must(t, err)

			// The import first, from the tree as the script finds it.
			imp := run(t, work, nil, khookBin, "import", "script", "--out", "khook.yaml", script)
			t.Logf("khook import script: exit %d\n%s", imp.code, imp.stderr)
			if wantCode := map[bool]int{false: 0, true: 1}[tc.partial]; imp.code != wantCode {
				t.Fatalf("khook import script exited %d; want %d.", imp.code, wantCode)
			}
			for _, w := range tc.importSays {
				if !strings.Contains(imp.stderr, w) {
					t.Errorf("The import does not say %q.", w)
				}
			}

			before := snapshot(t, scriptKube)
			env := []string{"PATH=" + bin + ":/usr/bin:/bin", "KUBECONFIG=" + scriptKube.Kubeconfig}
			sh := run(t, work, env, "bash", script)
			t.Logf("bash %s: exit %d\n%s%s", script, sh.code, sh.stdout, sh.stderr)
			switch {
			case tc.scriptFails == "" && sh.code != 0:
				t.Fatalf("The script exited %d; want 0.", sh.code)
			case tc.scriptFails != "" && (sh.code == 0 || !strings.Contains(sh.stderr, tc.scriptFails)):
				t.Fatalf("The script exited %d without %q; want it to fail so.", sh.code, tc.scriptFails)
			}
			byScript := made(before, snapshot(t, scriptKube))

			before = snapshot(t, khookKube)
			ap := run(t, work, nil, khookBin, "apply", "-f", "khook.yaml", "--kubeconfig", khookKube.Kubeconfig)
			t.Logf("khook apply: exit %d\n%s%s", ap.code, ap.stdout, ap.stderr)
			if ap.code != 0 {
				t.Fatalf("khook apply of the imported spec exited %d; want 0.", ap.code)
			}
			byKhook := made(before, snapshot(t, khookKube))

			t.Logf("The script made %d objects: %s.", len(byScript), keys(byScript))
			t.Logf("khook's apply made %d objects: %s.", len(byKhook), keys(byKhook))
			got := differences(byScript, byKhook)
			want := tc.want
			if tc.scriptFails != "" {
				// Nothing by the script: every object khook made is a difference.
				want = differences(nil, byKhook)
				if len(want) == 0 {
					t.Errorf("khook's apply made nothing either; want the objects of the release.")
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("The objects differ other than the import says:\n%s\nwant only:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if len(byScript) == 0 && tc.scriptFails == "" {
				t.Errorf("The script made no object; the case compares nothing.")
			}
		})
	}
}

type result struct {
	stdout, stderr string
	code           int
}

// run runs a command in dir with a minimal environment and HOME of its own
// (helm's repositories and cache), and fails the test if it cannot start.
func run(t *testing.T, dir string, env []string, name string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir(), "NO_COLOR=1", "TERM=dumb"}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("Cannot run %s %s: %v.", name, strings.Join(args, " "), err)
	}
	return result{stdout.String(), stderr.String(), code}
}

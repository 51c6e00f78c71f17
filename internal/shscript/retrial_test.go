package shscript

import (
	"slices"
	"strings"
	"testing"

	"github.com/khook/khook/internal/importer"
	"github.com/khook/khook/spec"
)

// The second trial on the 12 scripts (#46).

const configMap = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"

// A helm or kubectl command as an if's condition whose failure the script
// carries on after (armada's `if kubectl apply …; else echo "leaving them
// as-is"; fi`, or no else) is said at its line as `cmd || true` is: the
// step fails the run where the script carried on. Not when the failure
// branch exits; a delete ignores a missing object.
func TestIfConditionFailureSaid(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
if kubectl apply -f pc.yaml; then
  echo applied
else
  echo "leaving them as-is"
fi
if helm upgrade --install app ./app; then echo ok; fi
if ! kubectl apply -f b.yaml; then
  echo failed; exit 1
fi
if kubectl delete job old -n apps; then echo gone; fi
if kubectl apply -f b.yaml; then echo ok; else exit 1; fi
`, "pc.yaml": configMap, "b.yaml": configMap, "app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n"})
	if len(res.Model.Steps) != 5 {
		t.Fatalf("fates %v", res.Model.Commands)
	}
	lines := infoLines(res.Model, "the script ignores its failure")
	if len(lines) != 3 || lines[0] != 2 || lines[1] != 7 || lines[2] != 11 {
		t.Fatalf("notes at %v, want 2, 7 and 11: %v", lines, res.Model.Info)
	}
	if n := res.Model.Info[slices.IndexFunc(res.Model.Info, func(n importer.Note) bool { return strings.Contains(n.Why, "ignores its failure") })]; !strings.Contains(n.Why, `(if …; else echo "leaving them as-is"; fi) and carries on`) {
		t.Errorf("note %s", n)
	}
	if d := res.Model.Steps[3].Out.Delete; d == nil || !*d.IgnoreNotFound {
		t.Errorf("delete %+v", res.Model.Steps[3].Out)
	}
}

// `cat <<EOF | envsubst | kubectl apply -f -` (dpsrv's confluent) and
// `envsubst <<EOF | kubectl apply -f -` are carried as `envsubst < file`
// is: the heredoc inline, its $VAR and ${VAR} khook variables. A
// SHELL-FORMAT keeps the others literal; a Secret from a file is not
// copied into the spec.
func TestEnvsubstHeredocPipe(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
export NS=confluent
export ID=$(kubectl get namespace kube-system -o jsonpath='{.metadata.uid}')
cat <<'EOF' | envsubst | kubectl apply -f -
apiVersion: v1
kind: ConfigMap
metadata:
  name: a
  namespace: $NS
data:
  id: ${ID}
  region: $REGION
EOF
envsubst <<EOF | kubectl apply -f -
apiVersion: v1
kind: ConfigMap
metadata: {name: b, namespace: $NS}
EOF
cat cm.yaml | envsubst '$NS' | kubectl apply -f -
envsubst < secret.yaml | kubectl apply -f -
`, "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: $NS}\ndata: {k: '${KEEP}'}\n",
		"secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {password: TRIALSECRET_FILE_789}\n"})
	if fateAt(res.Model, 4) != "step" || fateAt(res.Model, 14) != "step" || fateAt(res.Model, 19) != "step" || fateAt(res.Model, 20) != "not carried" {
		t.Fatalf("fates %v", res.Model.Commands)
	}
	want := []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: confluent\ndata:\n  id: ${ID}\n  region: ${REGION}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: confluent}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: confluent}\ndata: {k: '$${KEEP}'}\n",
	}
	for i, w := range want {
		if got := res.Model.Steps[i].Out.Apply.Manifests[0].Inline; got != w {
			t.Errorf("step %d inline\n%s\nwant\n%s", i, got, w)
		}
	}
	if v := res.Model.Var("REGION"); v == nil || !v.Required {
		t.Errorf("REGION %+v", v)
	}
	if strings.Contains(string(res.Spec), "TRIALSECRET") {
		t.Errorf("a Secret's file content in the spec:\n%s", res.Spec)
	}
}

// An apply of a path that is not there at import (kube-prometheus's
// manifests/setup, which its build.sh makes) is not a step, which would
// make the spec invalid: it is named not carried at its line, with the
// commands that make the path when the script has them. A delete's
// manifest is read only when it runs, and stays a step.
func TestApplyMissingPathNotCarried(t *testing.T) {
	res := importScript(t, map[string]string{"install.sh": `#!/bin/bash
./build.sh
kubectl apply --server-side -f manifests/setup
kubectl apply -k overlays/prod
kubectl apply -f later.yaml
kustomize build gen | kubectl apply -f -
kubectl delete -f old.yaml
kubectl apply -f there.yaml
`, "build.sh": "#!/bin/bash\nrm -rf manifests\nmkdir -p manifests/setup\njsonnet -J vendor -m manifests main.jsonnet\n", "there.yaml": configMap})
	for line, want := range map[int]string{
		3: "manifests/setup does not exist when the import runs, so khook cannot read it; the script makes it earlier (build.sh:3 mkdir, build.sh:4 jsonnet), which khook does not run: generate it and commit it, or import again once it exists",
		4: "overlays/prod does not exist when the import runs, so khook cannot read it; nothing in the script makes it, so bash's command fails too",
		5: "later.yaml does not exist when the import runs",
		6: "gen does not exist when the import runs",
	} {
		var why string
		for _, c := range res.Model.Commands {
			if c.Line == line && c.Fate == "not carried" {
				why = c.Why
			}
		}
		if !strings.Contains(why, want) {
			t.Errorf("line %d: %q, want %q", line, why, want)
		}
	}
	if fateAt(res.Model, 7) != "step" || fateAt(res.Model, 8) != "step" || len(res.Model.Steps) != 2 {
		t.Errorf("fates %v", res.Model.Commands)
	}
	if len(infoLines(res.Model, "not there at import")) != 1 {
		t.Errorf("the delete's missing manifest is not said: %v", res.Model.Info)
	}
}

// A step the check refuses takes its warnings with it (ksandermann's
// `sleep 5` said as wait: true on the dropped release); a step it refuses
// only with the stand-in value of a required variable stays, said once.
func TestCheckDropsTheStepsNotes(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "install.sh", "#!/bin/bash -e\nhelm upgrade --install prometheus ./prometheus\nsleep 5\nkubectl apply -n apps -f \"cm-${ENV_NAME}.yaml\" || true\nhelm upgrade --install app ./app -n apps || true\n")
	write(t, dir, "prometheus/Chart.yaml", "apiVersion: v2\nname: prometheus\nversion: 0.1.0\n")
	write(t, dir, "app/Chart.yaml", "apiVersion: v2\nname: app\nversion: 0.1.0\n")
	check := func(s *spec.Spec) spec.Problems {
		var ps spec.Problems
		for _, st := range s.Steps {
			if st.Helm != nil && st.Helm.Chart == "./prometheus" {
				ps = append(ps, spec.Problem{Path: st.Path + ".helm.chart", Message: "clusterrole.rbac.authorization.k8s.io/p: rbac.authorization.k8s.io/v1beta1 ClusterRole was removed in v1.22"})
			}
			if st.Apply != nil && st.Apply.Manifests[0].File == "./cm-x.yaml" {
				ps = append(ps, spec.Problem{Path: st.Path + ".apply.manifests.0", Message: "cannot read manifest file ./cm-x.yaml"})
			}
		}
		return ps
	}
	res, err := Import("install.sh", Options{Dir: dir, Check: check})
	if err != nil {
		t.Fatal(err)
	}
	if fateAt(res.Model, 2) != "not carried" || fateAt(res.Model, 4) != "step" || fateAt(res.Model, 5) != "step" {
		t.Fatalf("fates %v", res.Model.Commands)
	}
	var said []string
	for _, n := range res.Model.Info {
		said = append(said, n.String())
	}
	if len(said) != 3 || strings.Contains(strings.Join(said, "\n"), "prometheus") ||
		!strings.Contains(said[1], "install.sh:4: step apply-cm-env-name: khook validate finds, with stand-in values for ENV_NAME: cannot read manifest file ./cm-x.yaml") ||
		!strings.HasPrefix(said[2], "install.sh:5: step app: the script ignores its failure") {
		t.Errorf("warnings:\n%s", strings.Join(said, "\n"))
	}
}

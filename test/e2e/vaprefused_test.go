package e2e

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// #49 point 4: a ValidatingAdmissionPolicy or binding the API server
// refuses, khook validate --policy refuses, exit 2, at each field's
// FILE:LINE in the server's words. Each case of runner/policy's
// testdata/refused (the unit test's table) is sent to the test control
// plane as a dry-run create, and every field it refuses must be in
// khook's refusal with the server's message; a line the case marks
// `# want: FIELD` must be a field the server refuses and where khook
// reports it.
//
// khook runs the validation of k8s.io/kubernetes v1.37.1 while the test
// control plane is v1.37.1; on every case here both refuse the same
// fields in the same words, so the whole message is compared. A message
// that changes between the versions fails here: compare that case's
// field alone, saying why.
func TestVAPRefusedAsServer(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot, "runner", "policy", "testdata", "refused", "*.yaml"))
	if err != nil || len(files) < 8 {
		t.Fatalf("%d cases in runner/policy/testdata/refused (%v), want at least 8", len(files), err)
	}
	srv := newAPIServer(t)
	spec := writeSpec(t, "apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: refused}\nsteps:\n  - name: w\n    apply:\n      namespace: default\n      manifests:\n        - inline: '{apiVersion: v1, kind: ConfigMap, metadata: {name: refused}}'\n")
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			causes := serverRefuses(t, srv, file)
			if len(causes) == 0 {
				t.Fatalf("the API server accepts every object of %s; the case expects a refusal", file)
			}
			out := khook(t, invocation{Args: []string{"validate", "-f", spec, "--policy", file}})
			if out.Code != 2 {
				t.Fatalf("khook validate --policy %s: exit %d, want 2\n%s%s", file, out.Code, out.Stdout, out.Stderr)
			}
			said := strings.Join(strings.Fields(out.Stderr), " ")
			for _, c := range causes {
				words := c.Field + ": " + strings.Join(strings.Fields(strings.Split(c.Message, "\n")[0]), " ")
				if !strings.Contains(said, words) {
					t.Errorf("the API server refuses %q; khook validate does not say it:\n%s", words, out.Stderr)
				}
			}
			for line, field := range markedFields(t, file) {
				if !refusesField(causes, field) {
					t.Errorf("%s:%d marks %s, which the API server does not refuse (it refuses %v)", file, line, field, causes)
				}
				at := regexp.MustCompile(regexp.QuoteMeta(file+":"+strconv.Itoa(line)+":") + `\d+: [^\n]*refuses it: ` + regexp.QuoteMeta(field+": "))
				if !at.MatchString(out.Stderr) {
					t.Errorf("khook validate does not refuse %s at %s:%d:\n%s", field, file, line, out.Stderr)
				}
			}
		})
	}
}

// serverRefuses is every field the API server refuses when the objects
// of file are created (a dry run: nothing is stored).
func serverRefuses(t *testing.T, srv *apiServer, file string) []metav1.StatusCause {
	var causes []metav1.StatusCause
	for _, obj := range readObjects(t, file) {
		ri, err := srv.resource(obj, "")
		must(t, err)
		_, err = ri.Create(context.Background(), obj, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"})
		var status apierrors.APIStatus
		switch {
		case err == nil:
		case errors.As(err, &status) && status.Status().Details != nil && len(status.Status().Details.Causes) > 0:
			t.Logf("the API server: %v", err)
			causes = append(causes, status.Status().Details.Causes...)
		default:
			t.Fatalf("the API server's answer to %s %s of %s names no field: %v", obj.GetKind(), obj.GetName(), file, err)
		}
	}
	return causes
}

// markedFields are the lines of file ending `# want: FIELD`.
func markedFields(t *testing.T, file string) map[int]string {
	data, err := os.ReadFile(file)
	must(t, err)
	marked := map[int]string{}
	for i, l := range strings.Split(string(data), "\n") {
		if j := strings.Index(l, "# want: "); j >= 0 {
			marked[i+1] = strings.TrimSpace(l[j+len("# want: "):])
		}
	}
	return marked
}

func refusesField(causes []metav1.StatusCause, field string) bool {
	for _, c := range causes {
		if c.Field == field {
			return true
		}
	}
	return false
}

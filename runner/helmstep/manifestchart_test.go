package helmstep

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/khook/khook/spec"
	"github.com/khook/khook/test/chartsrc"
)

// A local chart that is a folder of plain manifests (trial 46z's owncloud
// addons: helmfile makes a chart of it) installs as a release of that
// name, each manifest under the folder a template, nested ones too; a
// kustomization folder is refused with what to write instead.
func TestManifestFolderIsAChart(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	files := map[string]string{
		"configmap.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: addon-config\ndata:\n  local.json: \"{}\"\n",
		"nested/extra.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: addon-extra\ndata:\n  release: \"{{ .Release.Name }}\"\n",
		"README.md":         "not a manifest\n",
	}
	chartsrc.WriteFiles(t, dir, files)
	out := f.run(f.step("addons", spec.Helm{Chart: dir, Release: "addons-office"}), stepTimeout)
	mustContain(t, "detail", out.Detail, "installed release addons-office revision 1")
	if d := f.configMap("addon-config"); d["local.json"] != "{}" {
		t.Errorf("addon-config: %v", d)
	}
	// Its files are templates, as helmfile's chart of them renders them.
	if d := f.configMap("addon-extra"); d["release"] != "addons-office" {
		t.Errorf("addon-extra: %v, want the release's name rendered", d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cm, err := testCluster.Client.CoreV1().ConfigMaps(f.ns).Get(ctx, "addon-config", metav1.GetOptions{})
	if err != nil || cm.Annotations["meta.helm.sh/release-name"] != "addons-office" {
		t.Errorf("addon-config is not the release's: %v %v", err, cm.Annotations)
	}

	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("resources: [configmap.yaml]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = f.try(f.step("kust", spec.Helm{Chart: dir}), stepTimeout)
	if err == nil || !strings.Contains(err.Error(), "is a kustomization, not a chart: apply it with an apply step") {
		t.Errorf("a kustomization as a chart: %v", err)
	}
}

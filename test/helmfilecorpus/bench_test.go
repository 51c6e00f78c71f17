package helmfilecorpus

import (
	"path/filepath"
	"testing"

	"github.com/khook/khook/internal/helmfile"
)

// largest is the corpus input with the most to import: 8 releases whose
// values come from their Flux HelmReleases through a values template, two
// hooks (a shell loop with kubectl wait and apply, a kubectl apply), the
// largest state helmfile build --embed-values prints of the corpus's
// home-ops family (19 KB; the other family has larger ones, chiefly values
// files: Countly-helm's 60 KB, cloudfoundry-kind-deployment's 23 releases).
const largest = "carldanley-homelab/bootstrap/helmfile.d/01-apps.yaml"

// BenchmarkImportLargestCorpusInput is #41's budget: importing the largest
// corpus input takes under a second (rendering, reading every file it
// reads, writing the spec; nothing written to disk).
func BenchmarkImportLargestCorpusInput(b *testing.B) {
	dir, err := filepath.Abs(filepath.Join(corpusDir, filepath.Dir(largest)))
	if err != nil {
		b.Fatal(err)
	}
	root, _ := filepath.Abs(filepath.Join(corpusDir, "carldanley-homelab"))
	lookup := func(name string) (string, bool) {
		if name == "ROOT_DIR" {
			return root, true
		}
		return "", false
	}
	for b.Loop() {
		res, err := helmfile.Import(dir, filepath.Base(largest), helmfile.Options{Env: lookup})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Releases) != 8 {
			b.Fatalf("%d releases imported, want 8", len(res.Releases))
		}
	}
}

package shscript

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzImportScript: the import ends, on any script, with a result or an
// error, in bounded time (a word it expanded again without end took 23 GB).
func FuzzImportScript(f *testing.F) {
	scripts, _ := filepath.Glob(filepath.Join(corpus, "*", "*.sh"))
	more, _ := filepath.Glob(filepath.Join(corpus, "*", "*", "*.sh"))
	for _, p := range append(scripts, more...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b))
		}
	}
	for _, s := range []string{
		"eksctl create x --username system:node:{{EC2PrivateDNSName}}\n",
		"helm upgrade --install a{b,c} ./x ${X:+--wait} ${1#*=}\n",
		"f() { f; }\nf\n", "for f in *; do kubectl apply -f $f; done\n",
		"while true; do kubectl get crd x && break; sleep 1; done\n",
		"cp install.sh t.yaml\nsed -i -e 's/\\(a\\)\\{2\\}/\\1&/g; s|x|y|I' t.yaml\nkubectl apply -f t.yaml\n",
		"cat <<EOF > v.yaml\na: $((1 / 0))\nEOF\nhelm upgrade -i x ./c -f v.yaml\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "install.sh"), []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = Import("install.sh", Options{Dir: dir})
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("the import of %q did not end in 20 s", script)
		}
	})
}

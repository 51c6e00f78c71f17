package render

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/khook/khook/internal/cli/cmdutil"
	"github.com/khook/khook/internal/cli/iostreams"
	"github.com/khook/khook/runner/command"
)

func TestRenderMergesOverlays(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "spec", "testdata", "overlay")
	want, err := os.ReadFile(filepath.Join(dir, "merged.golden"))
	if err != nil {
		t.Fatal(err)
	}
	ios, out, _ := iostreams.Test("")
	opts := &Options{F: cmdutil.NewFactory(ios), Spec: specFlags(filepath.Join(dir, "base.yaml"), filepath.Join(dir, "prod.yaml"))}
	if err := Run(opts); err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		t.Errorf("render printed\n%s\nwant spec/testdata/overlay/merged.golden", out)
	}
}

func TestRenderInvalidOverlayExits2(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "spec", "testdata", "overlay")
	ios, out, errOut := iostreams.Test("")
	opts := &Options{F: cmdutil.NewFactory(ios), Spec: specFlags(filepath.Join(dir, "base.yaml"), filepath.Join(dir, "bad-overlay.yaml"))}
	err := Run(opts)
	if cmdutil.CodeOf(err) != command.ExitValidation || out.Len() != 0 {
		t.Fatalf("err %v (exit %d), stdout %q", err, cmdutil.CodeOf(err), out)
	}
	if !strings.Contains(errOut.String(), "bad-overlay.yaml:7:16: steps.1.apply.waitFor") || !strings.Contains(errOut.String(), "spec is invalid: 3 problems") {
		t.Errorf("stderr:\n%s", errOut)
	}
}

// Secret values never reach the rendered text.
func TestRenderRedactsSecrets(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "k.yaml")
	os.WriteFile(file, []byte("apiVersion: khook.io/v1\nkind: Khook\nmetadata: {name: t}\nsteps:\n  - name: a\n    job: {image: busybox, env: {TOKEN: \"${TOKEN}\"}}\n"), 0o644)
	ios, out, _ := iostreams.Test("")
	ios.Environ = []string{"KHOOK_SECRET_TOKEN=hunter2-very-secret"}
	if err := Run(&Options{F: cmdutil.NewFactory(ios), Spec: specFlags(file)}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "hunter2") || !strings.Contains(out.String(), "TOKEN:") {
		t.Errorf("render printed:\n%s", out)
	}
}

func specFlags(files ...string) cmdutil.SpecFlags {
	return cmdutil.SpecFlags{Files: files, VarPrefix: cmdutil.DefaultVarPrefix, SecretPrefix: cmdutil.DefaultSecretPrefix}
}

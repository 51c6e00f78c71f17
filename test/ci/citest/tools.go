package citest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// ToolsDir is where the pinned tools live: $TOOLS_BIN, else
// <user cache>/khook/tools (the Makefile's TOOLS_BIN).
func ToolsDir(t testing.TB) string {
	t.Helper()
	if dir := os.Getenv("TOOLS_BIN"); dir != "" {
		return dir
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("no user cache directory for the pinned tools: %v", err)
	}
	return filepath.Join(cache, "khook", "tools")
}

// NPMTool returns the command bin of the npm package pinned in
// tools/npm/<pkg>/package.json, installed by `make pipeline-tools` into
// <tools dir>/npm/<pkg>-<version>. It skips the test, saying how to
// install it, when node or the pinned version is absent.
func NPMTool(t testing.TB, pkg, bin string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(RepoRoot(), "tools", "npm", pkg, "package.json"))
	if err != nil {
		t.Fatalf("reading the pin of %s: %v", pkg, err)
	}
	var pin struct{ Dependencies map[string]string }
	if err := json.Unmarshal(data, &pin); err != nil || pin.Dependencies[pkg] == "" {
		t.Fatalf("tools/npm/%s/package.json pins no version of %s (%v)", pkg, pkg, err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skipf("node is not installed: %s %s runs on it (apt-get install -y nodejs npm, then make pipeline-tools)", pkg, pin.Dependencies[pkg])
	}
	path := filepath.Join(npmToolDir(t, pkg, pin.Dependencies[pkg]), "node_modules", ".bin", bin)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s %s is not installed at %s: make pipeline-tools installs it", pkg, pin.Dependencies[pkg], path)
	}
	return path
}

// npmToolDir is the install directory of an npm tool's pinned version.
func npmToolDir(t testing.TB, pkg, version string) string {
	return filepath.Join(ToolsDir(t), "npm", pkg+"-"+version)
}

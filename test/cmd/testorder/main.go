// Command testorder prints the module's packages in the order `make test`
// hands them to go test, which starts them in the order named, two at a
// time on two cores:
//
//	testorder [LONGEST...]
//
// First the packages whose tests need no tool that `make test` builds in
// the background (the control plane): they run while it builds, where a
// package that needs one would hold a slot waiting for its lock. Then those
// that need one. The helm CLI links in seconds from packages go test has
// compiled, and the helmfile CLI builds only when a record of its output is
// stale (test/helmfilecorpus), so a package that needs only those waits for
// nothing. Within each group the packages
// named LONGEST come first, in the order given, so that no long package
// starts late and runs alone at the end.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// built are the packages of the tools built in the background: a package
// whose tests import one waits.
var built = []string{
	"github.com/khook/khook/test/clusterbin",
}

func main() {
	out, err := exec.Command("go", "list", "-test", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "./...").Output()
	if err != nil {
		fail("go list: %v%s", err, stderrOf(err))
	}
	module, err := exec.Command("go", "list", "-m").Output()
	if err != nil {
		fail("go list -m: %v%s", err, stderrOf(err))
	}
	longest := make([]string, len(os.Args[1:]))
	for i, p := range os.Args[1:] {
		longest[i] = strings.TrimSpace(string(module)) + strings.TrimPrefix(p, ".")
	}
	free, waits := order(out)
	for _, p := range longest {
		if !slices.Contains(free, p) && !slices.Contains(waits, p) {
			fail("%s is not a package of this module", p)
		}
	}
	for _, p := range slices.Concat(longestFirst(free, longest), longestFirst(waits, longest)) {
		fmt.Println(p)
	}
}

// order splits go list -test's lines into the packages that need no built
// tool and those that do, each in go list's order.
func order(list []byte) (free, waits []string) {
	var pkgs []string
	needs := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(list))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		name := fields[0]
		switch {
		case strings.HasSuffix(name, ".test"): // the test binary: all its deps
			pkg := strings.TrimSuffix(name, ".test")
			needs[pkg] = slices.ContainsFunc(fields[1:], func(d string) bool { return slices.Contains(built, d) })
		case !strings.Contains(name, " ") && !strings.Contains(sc.Text(), "["):
			pkgs = append(pkgs, name)
		}
	}
	for _, p := range pkgs {
		switch {
		case needs[p]:
			waits = append(waits, p)
		default:
			free = append(free, p)
		}
	}
	return free, waits
}

// longestFirst puts the packages of group named in longest first, in
// longest's order, and the others after them in their order.
func longestFirst(group, longest []string) []string {
	var first, rest []string
	for _, p := range longest {
		if slices.Contains(group, p) {
			first = append(first, p)
		}
	}
	for _, p := range group {
		if !slices.Contains(longest, p) {
			rest = append(rest, p)
		}
	}
	return append(first, rest...)
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
		return ": " + strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "testorder: "+format+"\n", args...)
	os.Exit(1)
}

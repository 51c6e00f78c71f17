package e2e

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// opened watches every directory under root with inotify and collects the
// regular files opened in them until stop.
func opened(t *testing.T, root string) (stop func() []string) {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		t.Skipf("no inotify here: %v", err)
	}
	dirs := map[int]string{}
	var stopping atomic.Bool
	must(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		wd, err := unix.InotifyAddWatch(fd, path, unix.IN_OPEN)
		if err != nil {
			return err
		}
		dirs[wd] = path
		return nil
	}))
	var mu sync.Mutex
	seen := map[string]bool{}
	// A last open of our own marks the end of the events we want.
	marker := filepath.Join(root, "README.md")
	markerSeen := make(chan struct{})
	var once sync.Once
	go func() {
		buf := make([]byte, 64*1024)
		for {
			n, err := unix.Read(fd, buf)
			if err != nil || n <= 0 {
				return
			}
			for off := 0; off+unix.SizeofInotifyEvent <= n; {
				ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
				name := string(bytes.TrimRight(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)], "\x00"))
				off += unix.SizeofInotifyEvent + int(ev.Len)
				if ev.Mask&unix.IN_ISDIR != 0 || name == "" {
					continue
				}
				p := filepath.Join(dirs[int(ev.Wd)], name)
				mu.Lock()
				seen[p] = true
				mu.Unlock()
				if p == marker && stopping.Load() {
					once.Do(func() { close(markerSeen) })
				}
			}
		}
	}()
	return func() []string {
		stopping.Store(true)
		f, err := os.Open(marker)
		must(t, err)
		f.Close()
		select {
		case <-markerSeen:
		case <-time.After(time.Minute):
			t.Fatal("inotify never reported the marker's open")
		}
		// The reader stays blocked in read(2) until the process ends: closing
		// an inotify descriptor does not wake it.
		mu.Lock()
		defer mu.Unlock()
		delete(seen, marker)
		out := make([]string, 0, len(seen))
		for p := range seen {
			out = append(out, p)
		}
		sort.Strings(out)
		return out
	}
}

// khook files lists exactly the files a plan of each example opens: the
// plan runs against the cluster under inotify watches on examples/, and
// the regular files it opened are the list. Remote charts are refused at
// once (a proxy on a closed port): their steps open no local file.
func TestFilesListWhatAPlanReads(t *testing.T) {
	root := filepath.Join(repoRoot, "examples")
	var examples []string
	must(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".yaml") {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil && bytes.Contains(b, []byte("\nkind: Khook")) {
			rel, _ := filepath.Rel(root, path)
			examples = append(examples, rel)
		}
		return err
	}))
	offline := []string{"HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9", "NO_PROXY=127.0.0.1,localhost"}
	for _, ex := range examples {
		t.Run(ex, func(t *testing.T) {
			in := exampleInputs[ex]
			flags := append([]string{"-f", filepath.Join("examples", ex)}, in.args...)
			list := khook(t, invocation{Args: append([]string{"files", "--absolute"}, flags...), Env: in.env, Dir: repoRoot})
			if list.Code != 0 {
				t.Fatalf("khook files: exit %d\n%s", list.Code, list.Stderr)
			}
			stop := opened(t, root)
			plan := khook(t, invocation{Args: append([]string{"plan"}, flags...), Env: append(in.env, offline...), Dir: repoRoot})
			read := credentialsLeftOut(stop(), in.env)
			t.Logf("plan exit %d; it read %d files", plan.Code, len(read))
			if d := cmp.Diff(read, strings.Fields(list.Stdout)); d != "" {
				t.Errorf("khook files (+) against what the plan opened (-):\n%s\nplan stderr:\n%s", d, plan.Stderr)
			}
		})
	}
}

// credentialsLeftOut drops from read the files the environment names
// (SOPS_AGE_KEY_FILE=...): a key is the runner's, not a file of the spec,
// and a change to it is no change to what the spec deploys.
func credentialsLeftOut(read, env []string) []string {
	keys := map[string]bool{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasSuffix(k, "_FILE") {
			if !filepath.IsAbs(v) {
				v = filepath.Join(repoRoot, v)
			}
			keys[v] = true
		}
	}
	out := read[:0:0]
	for _, p := range read {
		if !keys[p] {
			out = append(out, p)
		}
	}
	return out
}

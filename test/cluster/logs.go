package cluster

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/khook/khook/test/clusterbin"
)

// DumpLogs writes the last n lines of every component's log to w.
func (c *Cluster) DumpLogs(w io.Writer, n int) {
	for _, p := range c.procs {
		fmt.Fprintf(w, "----- %s (last %d lines of %s) -----\n%s\n", p.name, n, p.logPath, logTail(p.logPath, n))
	}
	if c.storage != nil {
		fmt.Fprintf(w, "----- provisioner (last %d lines of %s) -----\n%s\n", n, c.storage.logPath, logTail(c.storage.logPath, n))
	}
}

// DumpLogsOnFailure logs the tail of every component's log through t when
// the test has failed by the end.
func (c *Cluster) DumpLogsOnFailure(t testing.TB) {
	t.Helper()
	t.Cleanup(func() {
		if !t.Failed() || len(c.procs) == 0 {
			return
		}
		var b bytes.Buffer
		c.DumpLogs(&b, 30)
		t.Logf("control-plane logs:\n%s", b.String())
	})
}

// logTail returns the last n lines of the file at path, reading at most the
// last 64 KiB.
func logTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer f.Close()
	const max = 64 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > max {
		_, _ = f.Seek(-max, io.SeekEnd)
	}
	b, _ := io.ReadAll(f)
	return clusterbin.LastLines(string(b), n)
}

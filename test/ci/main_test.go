package ci

import (
	"os"
	"testing"

	"github.com/khook/khook/test/ci/citest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	citest.RemoveBuilds()
	os.Exit(code)
}

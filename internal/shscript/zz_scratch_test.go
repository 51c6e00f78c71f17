package shscript

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/khook/khook/internal/importer"
)

func TestZZScratch(t *testing.T) {
	f := os.Getenv("ZZ")
	if f == "" {
		t.Skip()
	}
	res, err := Import(f, Options{Dir: os.Getenv("ZZDIR"), Args: strings.Fields(os.Getenv("ZZARGS"))})
	if err != nil {
		t.Fatal(err)
	}
	out, err := importer.Write(res.Model)
	fmt.Println(string(out), err)
}

package shscript

import (
	"path"
	"regexp"
	"strings"

	"github.com/khook/khook/internal/importer"
)

// A manifest the script downloads and then applies — wget URL; kubectl
// apply -f FILE, curl -sLo FILE URL, curl URL > FILE — is the apply of
// that URL: the step reads it when it runs, as kubectl apply -f URL does
// (trial 46zo's N3: named as made by the sed that edits it, with no word
// of the URL). A file the script edits after downloading it is read as a
// file the run makes: the step reads it, and the download and the edit
// are named, to do in CI before khook.

// downloadTarget is the file a curl or wget writes its URL to, and the
// URL; "" when it writes no one file (curl to stdout, a page, several URLs).
func (t *translator) downloadTarget(x *cmd) (file, url string) {
	var urls []string
	out, dir := "", ""
	args := x.args[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := ""
		if i+1 < len(args) {
			next = args[i+1]
		}
		switch {
		case regexp.MustCompile(`^https?://`).MatchString(a):
			urls = append(urls, a)
		case x.args[0] == "curl" && (a == "-o" || a == "--output"), x.args[0] == "wget" && (a == "-O" || a == "--output-document"):
			out = next
			i++
		case x.args[0] == "wget" && strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "O"):
			// -qO FILE, -qO- (standard output)
			if rest := a[strings.Index(a, "O")+1:]; rest != "" {
				out = rest
			} else {
				out = next
				i++
			}
		case x.args[0] == "wget" && a == "-P":
			dir = next
			i++
		case x.args[0] == "curl" && strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.HasSuffix(a, "o"):
			out = next // curl -sLo FILE
			i++
		case x.args[0] == "curl" && (a == "-O" || a == "--remote-name" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.HasSuffix(a, "O")):
			out = "\x00remote"
		case strings.HasPrefix(a, "--output="), strings.HasPrefix(a, "--output-document="):
			_, out, _ = strings.Cut(a, "=")
		}
	}
	if len(urls) != 1 {
		return "", ""
	}
	if out == "" && x.args[0] == "curl" {
		out = t.outFile(x) // curl URL > FILE
		if out != "" {
			return out, urls[0]
		}
		return "", ""
	}
	if out == "" || out == "\x00remote" {
		out = path.Base(strings.SplitN(urls[0], "?", 2)[0])
		if dir != "" {
			out = dir + "/" + out
		}
	}
	if out == "-" || out == "/dev/null" {
		return "", ""
	}
	return t.writeKey(out), urls[0]
}

// downloads records the file a curl or wget writes its URL to; false when
// it writes none.
func (t *translator) downloads(x *cmd, name string) bool {
	if name != "curl" && name != "wget" || !x.ok {
		return false
	}
	key, url := t.downloadTarget(x)
	if key == "" || !manifestURL.MatchString(url) || importer.URLCredentials(url) {
		return false // a URL with user:password@ never goes into the spec
	}
	t.recordMade(x, name) // an apply of it edited says who makes it
	note := t.noteAt(x.stmt, t.text(x.stmt), "khook runs no shell commands; "+whatToDo(name, x.args[1:]))
	t.wrote[key] = t.undecidedWrite(&written{url: url, at: t.loc(x.stmt), notes: []importer.Note{note}})
	return true
}

// manifestURL is a URL of a YAML or JSON file.
var manifestURL = regexp.MustCompile(`^https?://[^?#]*\.(ya?ml|json)([?#].*)?$`)

// downloaded is the URL a file the script downloaded and did not change
// holds ("" for none): a step reads that URL.
func (t *translator) downloaded(p string) string {
	w := t.wrote[t.writeKey(p)]
	if w == nil || w.url == "" || w.edited || w.outside(t.when) {
		return ""
	}
	w.read = true
	return w.url
}

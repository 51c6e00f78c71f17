package importer

import "strings"

// secretWords are the parts of a variable or key name that make its value
// a secret (TOKEN, DB_PASSWORD, api-key, ...).
var secretWords = map[string]bool{"TOKEN": true, "PASSWORD": true, "PASSWD": true, "PASS": true, "SECRET": true,
	"KEY": true, "APIKEY": true, "CREDENTIALS": true, "CREDS": true, "PRIVATE": true, "PAT": true}

// SecretLooking tells a name (a variable, a key, a file name) whose value
// is a secret: both importers declare such a value a secret: true
// variable and never write it.
func SecretLooking(name string) bool {
	up := strings.ToUpper(name)
	for _, part := range strings.FieldsFunc(up, func(r rune) bool { return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') }) {
		if secretWords[part] {
			return true
		}
	}
	return false
}

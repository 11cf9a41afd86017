package validation

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits of an htpasswd file. NGINX reads the whole file on every request
// it authenticates, in the worker serving it, so its size is a cost per
// request.
const (
	// MaxHtpasswdUsers is the most users one file may hold.
	MaxHtpasswdUsers = 1000
	// MaxHtpasswdBytes is the largest file, as written to the data plane.
	MaxHtpasswdBytes = 128 << 10
	// maxHtpasswdUser is the longest user name, in bytes.
	maxHtpasswdUser = 256
	// maxHtpasswdErrors bounds the lines one error names.
	maxHtpasswdErrors = 10
)

// HtpasswdUser is one line of an htpasswd file: a user and a password hash.
type HtpasswdUser struct {
	Name, Hash string
}

// Htpasswd reads an htpasswd file as NGINX does (auth_basic_user_file)
// and checks every line: one "user:hash" per line, blank lines and lines
// starting with '#' skipped, CRLF line ends allowed, and what follows a
// second ':' ignored (NGINX ignores it). Every hash must be one NGINX can
// verify (PasswordHash). It returns the users in file order, for the data
// plane's file written anew: one "user:hash" line each, nothing else.
//
// The error names the lines that are refused, at most ten, and never the
// users nor their hashes: statuses and logs must not show them.
func Htpasswd(data []byte) ([]HtpasswdUser, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("the htpasswd file is not UTF-8 text")
	}
	var users []HtpasswdUser
	var errs []error
	fail := func(line int, format string, args ...any) {
		if len(errs) < maxHtpasswdErrors {
			errs = append(errs, fmt.Errorf("line %d: "+format, append([]any{line}, args...)...))
		} else if len(errs) == maxHtpasswdErrors {
			errs = append(errs, errors.New("and more lines"))
		}
	}
	seen := map[string]int{}
	size := 0
	for i, line := range strings.Split(string(data), "\n") {
		n := i + 1
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) == "" || line[0] == '#' {
			// NGINX skips comments, and finds no user on a blank line.
			continue
		}
		name, rest, found := strings.Cut(line, ":")
		if !found {
			fail(n, "no ':' between a user and a password hash")
			continue
		}
		hash, _, _ := strings.Cut(rest, ":")
		if why := htpasswdUserName(name); why != "" {
			fail(n, "the user name %s", why)
			continue
		}
		if strings.ContainsFunc(hash, isControl) {
			fail(n, "the password hash holds a control character")
			continue
		}
		if first, dup := seen[name]; dup {
			fail(n, "the user is on line %d already, and NGINX only reads the first", first)
			continue
		}
		seen[name] = n
		if _, err := PasswordHash(hash); err != nil {
			fail(n, "%v", err)
			continue
		}
		users = append(users, HtpasswdUser{Name: name, Hash: hash})
		size += len(name) + len(hash) + 2
	}
	switch {
	case len(errs) > 0:
		return nil, errors.Join(errs...)
	case len(users) == 0:
		return nil, errors.New("the htpasswd file has no user")
	case len(users) > MaxHtpasswdUsers:
		return nil, fmt.Errorf("the htpasswd file has %d users; Gatewall allows at most %d (NGINX reads the whole file on every request)", len(users), MaxHtpasswdUsers)
	case size > MaxHtpasswdBytes:
		return nil, fmt.Errorf("the htpasswd file's users take %d bytes; Gatewall allows at most %d (NGINX reads the whole file on every request)", size, MaxHtpasswdBytes)
	}
	return users, nil
}

// HtpasswdFile is the data plane's file of users: one "user:hash" line each.
func HtpasswdFile(users []HtpasswdUser) []byte {
	var b strings.Builder
	for _, u := range users {
		b.WriteString(u.Name)
		b.WriteByte(':')
		b.WriteString(u.Hash)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// htpasswdUserName says what is wrong with a user name ("" when nothing):
// NGINX compares it with the user a client sends, which RFC 7617 forbids
// to hold a ':' or control characters.
func htpasswdUserName(name string) string {
	switch {
	case name == "":
		return "is empty"
	case len(name) > maxHtpasswdUser:
		return fmt.Sprintf("is %d bytes long, more than %d", len(name), maxHtpasswdUser)
	case strings.ContainsFunc(name, isControl):
		return "holds a control character"
	case strings.TrimSpace(name) != name:
		return "starts or ends with white space, which a client's user name would have to match"
	}
	return ""
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 }

package validation

import (
	"os"
	"strings"
	"testing"
)

// TestHtpasswdEveryFormat: a file with one user of every format NGINX on
// the data plane verifies (test/auth logs in as each through NGINX) is
// accepted whole and written anew without its comments.
func TestHtpasswdEveryFormat(t *testing.T) {
	data, err := os.ReadFile("testdata/htpasswd-every-format")
	if err != nil {
		t.Fatal(err)
	}
	users, err := Htpasswd(data)
	if err != nil {
		t.Fatal(err)
	}
	schemes := map[string]bool{}
	for _, u := range users {
		s, err := PasswordHash(u.Hash)
		if err != nil {
			t.Errorf("%s: %v", u.Name, err)
		}
		schemes[s] = true
	}
	if len(users) != 24 || len(schemes) != 16 {
		t.Errorf("%d users of %d schemes, want 24 of 16: %v", len(users), len(schemes), schemes)
	}
	if got := string(HtpasswdFile(users)); strings.Contains(got, "#") || strings.Count(got, "\n") != len(users) {
		t.Errorf("the file written anew keeps more than the users:\n%s", got)
	}
}

// TestPasswordHashRefusals: what NGINX could not verify, or would verify
// at a cost that stalls a worker, is refused, saying why.
func TestPasswordHashRefusals(t *testing.T) {
	for hash, want := range map[string]string{
		"":                                   "no format NGINX can verify",
		"plaintext":                          "no format NGINX can verify",
		"{PLAIN}":                            "must not be empty",
		"{SHA}not-base64!":                   "standard base64",
		"{SHA}YWJj":                          "not of 3 bytes",
		"{SHA}ohgYgF2kkgMlRbH1HlEDczlOc+M":   "standard base64",
		"{SSHA}ohgYgF2kkgMlRbH1HlEDczlOc+M=": "and a salt",
		"$apr1$toolongsalt$NVJvTwou3uQmXoZ1rmfxg.":                            "salt of 1 to 8",
		"$apr1$Ab1./xyz$NVJvTwou3uQmXoZ1rmfxg":                                "22 such characters",
		"$1$Ab1./xyz$hSx1p1yR1eNHMFe/CVAqa/x":                                 "22 such characters",
		"$5$saltsalt$NC.wqKsmbNxitsP7rMqyimAabnjUdZ2JpIide8bxt8":              "43 such characters",
		"$5$rounds=999$saltsalt$VpQV82y4Ey1Hsja95CeuCpwsKbXPMzkfdDYljMVWxvC":  "1,000 or more",
		"$5$rounds=0100$saltsalt$VpQV82y4Ey1Hsja95CeuCpwsKbXPMzkfdDYljMVWxvC": "rounds=N$",
		"$6$rounds=100001$saltsalt$" + strings.Repeat("a", 86):                "at most 100000",
		"$6$rounds=4294967296$saltsalt$" + strings.Repeat("a", 86):            "rounds=N$",
		"$2b$11$abcdefghijklmnopqrstuuCVU4tzEy1Srvn3MhIQlChy0eVdfLDtG":        "cost of at most 10",
		"$2b$31$abcdefghijklmnopqrstuuCVU4tzEy1Srvn3MhIQlChy0eVdfLDtG":        "about 34 h",
		"$2b$03$abcdefghijklmnopqrstuuCVU4tzEy1Srvn3MhIQlChy0eVdfLDtG":        "costs are 04 to 31",
		"$2c$05$abcdefghijklmnopqrstuuCVU4tzEy1Srvn3MhIQlChy0eVdfLDtG":        "a bcrypt hash is",
		"$2b$05$abcdefghijklmnopqrstuuCVU4tzEy1Srvn3MhIQlChy0eVdfLDt":         "53 characters",
		"$y$jAT$abcdabcdabcdabcd$" + strings.Repeat("a", 43):                  "at most 16 MiB",
		"$y$jFT$abcdabcdabcdabcd$" + strings.Repeat("a", 43):                  "1 GiB",
		"$y$j9T$abcde$" + strings.Repeat("a", 43):                             "no whole number of bytes",
		"$y$j9T$abcdab$" + strings.Repeat("a", 43):                            "decode to no byte",
		"$y$j9TX$abcd$" + strings.Repeat("a", 43):                             "j and two characters",
		"$y$/9T$abcd$" + strings.Repeat("a", 43):                              "j and two characters",
		"$7$CU..../....saltsalt$" + strings.Repeat("a", 43):                   "2^17",
		"$7$C6.....0...saltsalt$" + strings.Repeat("a", 43):                   "2^17",
		"$7$./..../....saltsalt$" + strings.Repeat("a", 43):                   "at least 1",
		"$sha1$64001$saltsalt$L5iZBuwhYDTV6EedboxUh3tIKOnK":                   "at most 64000",
		"$md5,rounds=10001$saltsalt$$ymmnDyhmBO4DS5fDwXb3L/":                  "at most 10000",
		"$md5$saltsalt$ymmnDyhmBO4DS5fDwXb3L/":                                "$$ and 22",
		"$3$$94077AB46C1D74C2F53A59E4F5D6994D":                                "lower-case hexadecimal",
		"_J9..saltX4cKuuKGtzg.":                                               "19 characters",
		"_zzzzsaltX4cKuuKGtzg":                                                "at most 262144",
		"abTk71qDTQKM":                                                        "no format NGINX can verify",
		"abTk71qDTQKM!":                                                       "no format NGINX can verify",
	} {
		_, err := PasswordHash(hash)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want an error saying %q", hash, err, want)
			continue
		}
		if len(hash) > 8 && strings.Contains(err.Error(), hash) {
			t.Errorf("%q: the error quotes the hash: %v", hash, err)
		}
	}
}

// TestHtpasswdLines: lines are read as NGINX reads them, refused with
// their numbers, and never quoted.
func TestHtpasswdLines(t *testing.T) {
	const ok = "$apr1$Ab1./xyz$NVJvTwou3uQmXoZ1rmfxg."
	for name, c := range map[string]struct {
		file  string
		users []HtpasswdUser
		err   string
	}{
		"comments, blank lines, CRLF, a third field": {
			file:  "# users\r\n\r\nalice:" + ok + ":a comment\r\n  \nbob:" + ok,
			users: []HtpasswdUser{{"alice", ok}, {"bob", ok}},
		},
		"no colon":           {file: "alice\n", err: "line 1: no ':'"},
		"an empty user":      {file: ":" + ok, err: "line 1: the user name is empty"},
		"a spaced user":      {file: "bob:" + ok + "\n alice-SECRET:" + ok, err: "line 2: the user name starts or ends with white space"},
		"a control":          {file: "ali\x01ce-SECRET:" + ok, err: "line 1: the user name holds a control character"},
		"a control in hash":  {file: "alice:{PLAIN}x\x7fSECRET", err: "line 1: the password hash holds a control character"},
		"a repeated user":    {file: "alice-SECRET:" + ok + "\nbob:" + ok + "\nalice-SECRET:" + ok, err: "line 3: the user is on line 1 already"},
		"a bad hash":         {file: "alice:" + ok + "\nbob-SECRET:$2b$12$SECRETghijklmnopqrstuuCVU4tzEy1Srvn3MhIQlChy0eVdfLDtG", err: "line 2: a bcrypt hash with cost 12"},
		"nothing":            {file: "# nobody\n", err: "has no user"},
		"not UTF-8":          {file: "al\xffice:" + ok, err: "not UTF-8"},
		"a long user":        {file: strings.Repeat("a", 257) + ":" + ok, err: "257 bytes long"},
		"errors are bounded": {file: strings.Repeat("x\n", 30), err: "line 10: no ':' between a user and a password hash\nand more lines"},
	} {
		t.Run(name, func(t *testing.T) {
			users, err := Htpasswd([]byte(c.file))
			if c.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(users) != len(c.users) {
					t.Fatalf("users %v, want %v", users, c.users)
				}
				for i := range users {
					if users[i] != c.users[i] {
						t.Errorf("user %d: %v, want %v", i, users[i], c.users[i])
					}
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("got %v, want an error with %q", err, c.err)
			}
			if strings.Contains(err.Error(), "SECRET") {
				t.Errorf("the error shows a user or a hash: %v", err)
			}
		})
	}
}

// FuzzHtpasswd: whatever a Secret holds, reading it never panics, never
// quotes a user or hash in its error (the seeds mark them with SeCrEt),
// and what it accepts is written anew into a file that reads back to the
// same users, one "user:hash" per line: no user or hash can add a line,
// a field or a comment to the data plane's file.
func FuzzHtpasswd(f *testing.F) {
	seed, err := os.ReadFile("testdata/htpasswd-every-format")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte("alice-SeCrEt:{PLAIN}SeCrEt\nbob:$2b$05$SeCrEtghijklmnopqrstuu1qdcFaS0PtqFUPzaCxLQ8/0lspH0ZEW\n"))
	f.Add([]byte("SeCrEt\n#x\r\n:SeCrEt:x\n SeCrEt :{SHA}SeCrEt\n"))
	f.Add([]byte("a:$y$j9T$SeCrEtabcdef$SeCrEt\nb:$7$C6..../....SeCrEt$SeCrEt\nc:_SeCrEtSeCrEtSeCrEtSe"))
	f.Fuzz(func(t *testing.T, data []byte) {
		users, err := Htpasswd(data)
		if err != nil {
			if strings.Contains(strings.ToLower(err.Error()), "secret") {
				t.Fatalf("the error shows a user or a hash: %v", err)
			}
			return
		}
		file := HtpasswdFile(users)
		again, err := Htpasswd(file)
		if err != nil {
			t.Fatalf("the file written anew does not read back: %v\n%q", err, file)
		}
		if len(again) != len(users) || strings.Count(string(file), "\n") != len(users) {
			t.Fatalf("%d users written as %d lines read back as %d users", len(users), strings.Count(string(file), "\n"), len(again))
		}
		for i := range users {
			if again[i] != users[i] || strings.ContainsAny(users[i].Name+users[i].Hash, ":\r\n") || strings.HasPrefix(users[i].Name, "#") {
				t.Fatalf("user %d: %q read back as %q", i, users[i], again[i])
			}
		}
	})
}

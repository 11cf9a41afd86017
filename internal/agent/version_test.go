package agent

import (
	"strings"
	"testing"

	"github.com/nginx/agent/v3/pkg/files"

	"github.com/gatewall/gatewall/internal/datafile"
)

// TestVersionIsContentHash: the agent server's version of a file set is
// datafile.Version, which changes with every path, mode and content.
func TestVersionIsContentHash(t *testing.T) {
	a := datafile.File{Path: "/etc/nginx/nginx.conf", Data: []byte("events {}\n"), Mode: 0o644}
	b := datafile.File{Path: "/etc/nginx/secrets/k.pem", Data: []byte("key"), Mode: 0o600}
	id := func(fs ...datafile.File) string {
		t.Helper()
		v, err := newVersion(fs)
		if err != nil {
			t.Fatal(err)
		}
		return v.id
	}
	base := id(a, b)
	if want := datafile.Version([]datafile.File{a, b}); base != want {
		t.Fatalf("version %q, want datafile.Version's %q: one version id for a configuration", base, want)
	}
	if id(b, a) != base {
		t.Fatal("the order of the files changed the version")
	}
	a0 := a
	a0.Mode = 0
	if id(a0, b) != base {
		t.Fatal("mode 0 is not the default 0644")
	}
	for name, fs := range map[string][]datafile.File{
		"content": {a, {Path: b.Path, Data: []byte("key2"), Mode: b.Mode}},
		"mode":    {a, {Path: b.Path, Data: b.Data, Mode: 0o640}},
		"path":    {a, {Path: "/etc/nginx/secrets/l.pem", Data: b.Data, Mode: b.Mode}},
		"set":     {a},
	} {
		if id(fs...) == base {
			t.Errorf("a change of %s kept the version", name)
		}
	}
	if id() == "" {
		t.Fatal("the empty configuration has no version")
	}
}

func TestVersionFileMeta(t *testing.T) {
	v, err := newVersion([]datafile.File{
		{Path: "/etc/nginx/secrets/k.pem", Data: []byte("key"), Mode: 0o600},
		{Path: "/etc/nginx/nginx.conf", Data: []byte("events {}\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.files) != 2 || v.files[0].GetFileMeta().GetName() != "/etc/nginx/nginx.conf" {
		t.Fatalf("files not sorted by path: %v", v.files)
	}
	for _, f := range v.files {
		m := f.GetFileMeta()
		want := map[string]string{"/etc/nginx/nginx.conf": "0644", "/etc/nginx/secrets/k.pem": "0600"}[m.GetName()]
		if m.GetPermissions() != want {
			t.Errorf("%s: permissions %q, want %q", m.GetName(), m.GetPermissions(), want)
		}
		data, meta, ok := v.lookup(m.GetName(), files.GenerateHash(v.data[m.GetName()]))
		if !ok || meta != m || int64(len(data)) != m.GetSize() || m.GetHash() != files.GenerateHash(data) {
			t.Errorf("%s: lookup %v %v, size %d", m.GetName(), ok, meta, m.GetSize())
		}
	}
	if _, _, ok := v.lookup("/etc/nginx/nginx.conf", files.GenerateHash([]byte("other"))); ok {
		t.Fatal("lookup with another content's hash succeeded")
	}
	if _, _, ok := v.lookup("/etc/nginx/missing", ""); ok {
		t.Fatal("lookup of a missing file succeeded")
	}
	ov := v.overview("instance", "/etc/nginx/nginx.conf")
	if ov.GetConfigVersion().GetVersion() != v.id || ov.GetConfigVersion().GetInstanceId() != "instance" || len(ov.GetFiles()) != 2 {
		t.Fatalf("overview %v", ov)
	}
}

func TestInvalidFiles(t *testing.T) {
	good := datafile.File{Path: "/etc/nginx/nginx.conf", Data: []byte("a")}
	bad := []datafile.File{
		{Path: "etc/nginx/x.conf"},
		{Path: "/etc/nginx/../passwd"},
		{Path: "/"},
		{Path: "/etc/nginx/a\nb"},
		{Path: "/etc/nginx/x", Mode: 0o4755},
	}
	if err := ValidateFiles([]datafile.File{good}); err != nil {
		t.Fatalf("a good file refused: %v", err)
	}
	for _, f := range bad {
		if err := ValidateFiles([]datafile.File{good, f}); err == nil {
			t.Errorf("%q (mode %v) accepted", f.Path, f.Mode)
		}
		v, err := newVersion([]datafile.File{good, f})
		if err == nil || len(v.files) != 1 {
			t.Errorf("%q: newVersion kept it (%d files) or said nothing (%v)", f.Path, len(v.files), err)
		}
	}
	if err := ValidateFiles([]datafile.File{good, good}); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Fatalf("duplicate paths: %v", err)
	}
	v, err := newVersion([]datafile.File{good, {Path: good.Path, Data: []byte("last")}})
	if err == nil || len(v.files) != 1 || string(v.data[good.Path]) != "last" {
		t.Fatalf("duplicate paths: the last one must win, with an error (%v)", err)
	}
}

// Package images_test checks the structure of the Dockerfiles that cannot
// be built here: F5's App Protect module needs the credentials of an F5
// subscription, so build/dataplane-waf/Dockerfile is checked for what a
// build would rely on, and against the test double's image, which is built
// the same way and run by the end-to-end tests.
package images_test

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/gatewall/gatewall/internal/policy"
)

// instruction is one Dockerfile instruction, its continuation lines joined
// and comment lines left out.
type instruction struct {
	cmd  string // upper case: FROM, RUN, COPY, ...
	args string
}

// stage is the instructions from one FROM to the next.
type stage struct {
	from         string
	instructions []instruction
}

func root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func parse(t *testing.T, path string) []stage {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root(), path))
	if err != nil {
		t.Fatal(err)
	}
	var stages []stage
	var cur strings.Builder
	flush := func() {
		line := strings.TrimSpace(cur.String())
		cur.Reset()
		if line == "" {
			return
		}
		cmd, args, _ := strings.Cut(line, " ")
		in := instruction{cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)}
		if in.cmd == "FROM" {
			stages = append(stages, stage{from: in.args})
			return
		}
		if len(stages) == 0 {
			stages = append(stages, stage{}) // ARGs before the first FROM
		}
		stages[len(stages)-1].instructions = append(stages[len(stages)-1].instructions, in)
	}
	for _, raw := range strings.Split(string(data), "\n") {
		line := strings.TrimSpace(raw)
		if strings.HasPrefix(line, "#") {
			continue // comments, also between continuation lines
		}
		if body, more := strings.CutSuffix(line, "\\"); more {
			cur.WriteString(body + " ")
			continue
		}
		cur.WriteString(line)
		flush()
	}
	flush()
	return stages
}

func (s stage) all(cmd string) []string {
	var out []string
	for _, in := range s.instructions {
		if in.cmd == cmd {
			out = append(out, in.args)
		}
	}
	return out
}

func (s stage) runs(pattern string) []string {
	re := regexp.MustCompile(pattern)
	var out []string
	for _, r := range s.all("RUN") {
		if re.MatchString(r) {
			out = append(out, r)
		}
	}
	return out
}

func final(stages []stage) stage { return stages[len(stages)-1] }

// directories are the directories a stage's RUN makes with mkdir -p.
func directories(s stage) []string {
	re := regexp.MustCompile(`mkdir -p ((?:/[^ &]+ ?)+)`)
	var out []string
	for _, r := range s.all("RUN") {
		for _, m := range re.FindAllStringSubmatch(r, -1) {
			out = append(out, strings.Fields(m[1])...)
		}
	}
	slices.Sort(out)
	return out
}

// moduleDir is where NGINX's packages (Debian's and nginx.org's) put
// dynamic modules, and where the images put App Protect's.
const moduleDir = "/usr/lib/nginx/modules/"

// TestAppProtectDockerfile: what building the App Protect image relies on.
func TestAppProtectDockerfile(t *testing.T) {
	stages := parse(t, "build/dataplane-waf/Dockerfile")
	img := final(stages)
	args := strings.Join(img.all("ARG"), "\n")
	for _, a := range []string{"NGINX_VERSION=", "APP_PROTECT_VERSION=", "NGINX_REPO=", "APP_PROTECT_REPO=", "NGINX_SIGNING_KEY="} {
		if !strings.Contains(args, a) {
			t.Errorf("the image's stage has no build argument %s…", a)
		}
	}

	t.Run("F5's credentials are build secrets of one step, in no layer", func(t *testing.T) {
		for _, s := range stages {
			for _, in := range s.instructions {
				if in.cmd != "RUN" && strings.Contains(in.args, "nginx-repo") {
					t.Errorf("%s mentions F5's credentials: %s", in.cmd, in.args)
				}
			}
		}
		install := img.runs(`--mount=type=secret,id=nginx-repo-crt,dst=/etc/ssl/nginx/nginx-repo.crt`)
		if len(install) != 1 || !strings.Contains(install[0], "--mount=type=secret,id=nginx-repo-key,dst=/etc/ssl/nginx/nginx-repo.key") {
			t.Fatalf("want one RUN mounting both build secrets, found %d", len(install))
		}
		r := install[0]
		for _, want := range []string{
			`"nginx=${NGINX_VERSION}-1~bookworm"`,
			`"app-protect-module-oss=${NGINX_VERSION}+${APP_PROTECT_VERSION}-1~bookworm"`,
			"${APP_PROTECT_REPO} bookworm nginx-plus", "${NGINX_REPO} bookworm nginx",
			"rm -f /etc/apt/apt.conf.d/90pkgs-nginx", // the apt settings naming the secrets go with the step
		} {
			if !strings.Contains(r, want) {
				t.Errorf("the installing step lacks %q", want)
			}
		}
	})

	t.Run("the Lua module is built for this NGINX with --with-compat, every source verified", func(t *testing.T) {
		if len(stages) < 2 {
			t.Fatal("no build stage for the Lua module")
		}
		lua := stages[len(stages)-2]
		build := lua.runs(`./configure`)
		if len(build) != 1 {
			t.Fatalf("want one configure step, found %d", len(build))
		}
		for _, want := range []string{"--with-compat", `--add-dynamic-module="../ngx_devel_kit-${NDK_VERSION}"`,
			`--add-dynamic-module="../lua-nginx-module-${LUA_NGINX_MODULE_VERSION}"`, "make -f objs/Makefile modules"} {
			if !strings.Contains(build[0], want) {
				t.Errorf("the Lua build lacks %q", want)
			}
		}
		fetches := regexp.MustCompile(`fetch "https://[^"]+" "\$\{([A-Z0-9_]+)\}"`).FindAllStringSubmatch(strings.Join(lua.all("RUN"), "\n"), -1)
		if len(fetches) != 5 {
			t.Errorf("%d verified downloads, want 5 (NGINX, ngx_devel_kit, lua-nginx-module, lua-resty-core, lua-resty-lrucache)", len(fetches))
		}
		luaArgs := strings.Join(lua.all("ARG"), "\n")
		for _, f := range fetches {
			if !strings.HasSuffix(f[1], "_SHA256") || !strings.Contains(luaArgs, f[1]+"=") {
				t.Errorf("download checked against %s, which is no sha256 build argument", f[1])
			}
		}
		if got := strings.Join(img.all("COPY"), "\n"); !strings.Contains(got, "--from=lua /out/modules/ "+moduleDir) {
			t.Errorf("the Lua modules are not copied to %s", moduleDir)
		}
	})

	t.Run("the build loads every module a WAF Gateway's nginx.conf does", func(t *testing.T) {
		check := img.runs(`nginx -t`)
		if len(check) != 1 {
			t.Fatalf("want one build-time nginx -t, found %d", len(check))
		}
		appProtect := moduleDir + filepath.Base(policy.WAFModule)
		for _, want := range []string{appProtect, moduleDir + "ndk_http_module.so", moduleDir + "ngx_http_lua_module.so", `require "resty.core"`} {
			if !strings.Contains(check[0], want) {
				t.Errorf("the build-time check does not load %s", want)
			}
		}
	})

	t.Run("the same data plane as build/dataplane: user, directories, agent, entrypoint", func(t *testing.T) {
		debian := final(parse(t, "build/dataplane/Dockerfile"))
		if got, want := directories(img), directories(debian); !slices.Equal(got, want) {
			t.Errorf("writable directories %v, build/dataplane's %v", got, want)
		}
		if got, want := img.all("USER"), debian.all("USER"); !slices.Equal(got, want) {
			t.Errorf("USER %v, build/dataplane's %v", got, want)
		}
		copies := strings.Join(img.all("COPY"), "\n")
		for _, c := range debian.all("COPY") {
			if !strings.Contains(copies, c) {
				t.Errorf("build/dataplane copies %q, this image does not", c)
			}
		}
		ep := img.all("ENTRYPOINT")
		if len(ep) != 1 || !strings.HasSuffix(ep[0], `"/usr/local/bin/gatewall-dataplane"]`) || !strings.Contains(ep[0], "gatewall-modules-link") {
			t.Errorf("ENTRYPOINT %v: want the modules link, then build/dataplane's entrypoint", ep)
		}
		link, err := os.ReadFile(filepath.Join(root(), "build/dataplane-waf/modules-link.sh"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(link), "ln -s "+strings.TrimSuffix(moduleDir, "/")+" /etc/nginx/modules") || !strings.Contains(string(link), `exec "$@"`) {
			t.Errorf("modules-link.sh does not link /etc/nginx/modules to %s and run its arguments", moduleDir)
		}
		if info, err := os.Stat(filepath.Join(root(), "build/dataplane-waf/modules-link.sh")); err != nil || info.Mode()&0o111 == 0 {
			t.Errorf("modules-link.sh is not executable (COPY keeps the mode)")
		}
	})
}

// TestAppProtectTestDoubleImageIsBuiltTheSameWay: the image the tests run
// puts the App Protect test double where F5's package puts the module, and
// checks at build time that this NGINX loads it, as the App Protect image
// does.
func TestAppProtectTestDoubleImageIsBuiltTheSameWay(t *testing.T) {
	img := final(parse(t, "test/images/dataplane-test/Dockerfile"))
	copies := strings.Join(img.all("COPY"), "\n")
	if !strings.Contains(copies, "ngx_http_app_protect_module.so "+moduleDir+filepath.Base(policy.WAFModule)) {
		t.Errorf("the test double is not copied to %s: %s", moduleDir+filepath.Base(policy.WAFModule), copies)
	}
	check := img.runs(`nginx -t`)
	if len(check) != 1 || !strings.Contains(check[0], "load_module "+policy.WAFModule) {
		t.Errorf("the test image does not check at build time that NGINX loads %s", policy.WAFModule)
	}
}

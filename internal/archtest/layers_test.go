package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// module is Gatewall's module path.
const module = "github.com/gatewall/gatewall/"

// pure are the packages of the pure core (DESIGN.md: same input, same
// output, no I/O): what they may not import or call is below.
var pure = []string{
	"internal/conditions", "internal/datafile", "internal/endpoints", "internal/graph", "internal/jwks", "internal/nginx/config",
	"internal/pki", "internal/policy", "internal/routekind", "internal/snippets", "internal/status", "internal/syntax",
	"internal/translate", "internal/validation",
}

// forbiddenImports are what the pure core must not import: I/O, clients,
// controllers, transports, and Gatewall's packages that do I/O.
var forbiddenImports = []string{
	"net", "net/http", "net/http/", "net/rpc", "os/exec", "os/signal", "io/ioutil", "syscall", "path/filepath", "plugin", "unsafe",
	"k8s.io/client-go/", "sigs.k8s.io/controller-runtime/", "google.golang.org/grpc", "github.com/aws/", "github.com/nginx/agent/",
	module + "internal/controller", module + "internal/controller/", module + "internal/manager", module + "internal/agent", module + "internal/endpointfeed",
	module + "internal/plm", module + "internal/provisioner", module + "internal/snapshot", module + "internal/statuswrite",
	module + "internal/dataplane", module + "internal/localrun", module + "internal/local/", module + "internal/render",
	module + "internal/userevents", module + "internal/metrics", module + "internal/wafbundles", module + "cmd/",
}

// allowedImports are exceptions to forbiddenImports: controller-runtime's
// client package for its object types (client.Object), whose I/O types
// are refused by forbiddenSelectors instead.
var allowedImports = []string{"sigs.k8s.io/controller-runtime/pkg/client"}

// forbiddenSelectors are what the pure core must not use of the packages
// it may import: a client that reads or writes the cluster, the clock.
var forbiddenSelectors = map[string][]string{
	"sigs.k8s.io/controller-runtime/pkg/client": {"Client", "Reader", "Writer", "StatusClient", "StatusWriter", "SubResourceClient", "New", "NewWithWatch"},
	"time": {"Now", "Since", "Until", "Sleep", "After", "AfterFunc", "NewTimer", "NewTicker", "Tick"},
	// os for its types (os.FileMode) only.
	"os": {"Open", "OpenFile", "Create", "ReadFile", "WriteFile", "ReadDir", "Remove", "RemoveAll", "Rename", "Mkdir", "MkdirAll",
		"MkdirTemp", "CreateTemp", "Stat", "Lstat", "Getenv", "LookupEnv", "Setenv", "Environ", "Exit", "Hostname", "Getwd", "Chdir",
		"Stdin", "Stdout", "Stderr", "Args"},
}

// layers are the stages of translation, lowest first: a package may
// import only those before it (and what is not listed).
var layers = [][]string{
	{"internal/validation", "internal/syntax", "internal/conditions", "internal/routekind", "internal/datafile", "internal/endpoints", "internal/pki", "internal/snippets", "internal/jwks"},
	{"internal/graph"},
	{"internal/nginx/config"},
	{"internal/policy"},
	{"internal/status"},
	{"internal/translate"},
}

// TestPureCoreDoesNoIO: the pure core imports nothing that does I/O or
// talks to the cluster, and calls no client or clock.
func TestPureCoreDoesNoIO(t *testing.T) {
	for _, pkg := range pure {
		for _, f := range parse(t, pkg) {
			aliases := map[string]string{}
			for _, imp := range f.file.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				name := filepath.Base(path)
				if imp.Name != nil {
					name = imp.Name.Name
				}
				aliases[name] = path
				if forbidden(path) {
					t.Errorf("%s imports %s: the pure core does no I/O and reaches no client or controller", f.name, path)
				}
			}
			ast.Inspect(f.file, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				x, ok := sel.X.(*ast.Ident)
				if !ok {
					return true
				}
				if names := forbiddenSelectors[aliases[x.Name]]; slices.Contains(names, sel.Sel.Name) {
					t.Errorf("%s uses %s.%s: the pure core is given what it needs (objects, the time) and reads nothing itself", f.name, aliases[x.Name], sel.Sel.Name)
				}
				return true
			})
		}
	}
}

// TestLayersImportDownwards: graph is below nginx/config, below policy,
// below status, below translate; none imports a stage above it.
func TestLayersImportDownwards(t *testing.T) {
	level := map[string]int{}
	for i, pkgs := range layers {
		for _, p := range pkgs {
			level[module+p] = i
		}
	}
	for i, pkgs := range layers {
		for _, pkg := range pkgs {
			for _, f := range parse(t, pkg) {
				for _, imp := range f.file.Imports {
					path, _ := strconv.Unquote(imp.Path.Value)
					if l, ok := level[path]; ok && l > i {
						t.Errorf("%s imports %s, a stage above it", f.name, strings.TrimPrefix(path, module))
					}
				}
			}
		}
	}
}

// TestEveryPurePackageIsGuarded: a package of the pure core that is
// removed or renamed fails here rather than leaving the guard empty.
func TestEveryPurePackageIsGuarded(t *testing.T) {
	for _, pkg := range pure {
		if len(parse(t, pkg)) == 0 {
			t.Errorf("%s has no Go files: update the lists of layers_test.go", pkg)
		}
	}
}

func forbidden(path string) bool {
	if slices.Contains(allowedImports, path) {
		return false
	}
	for _, f := range forbiddenImports {
		if path == f || strings.HasSuffix(f, "/") && strings.HasPrefix(path, f) {
			return true
		}
	}
	return false
}

type goFile struct {
	name string
	file *ast.File
}

// parse reads the non-test Go files of a package of the repository.
func parse(t *testing.T, pkg string) []goFile {
	t.Helper()
	dir := filepath.Join(repoRoot(t), pkg)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []goFile
	fset := token.NewFileSet()
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		full, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		full.Imports = f.Imports
		out = append(out, goFile{name: filepath.Join(pkg, e.Name()), file: full})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func repoRoot(t *testing.T) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

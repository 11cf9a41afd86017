package images

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// imageLine matches an `image:` field of a YAML manifest.
var imageLine = regexp.MustCompile(`(?m)^\s*(?:-\s*)?image:\s*["']?([^\s"'#]+)`)

// ManifestImages are the image references in the YAML files under dirs,
// sorted, each once: the names other projects' manifests (the conformance
// suite's) give the images the local runtime must have.
func ManifestImages(dirs ...string) ([]string, error) {
	var refs []string
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			if ext := filepath.Ext(path); ext != ".yaml" && ext != ".yml" {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range imageLine.FindAllStringSubmatch(string(data), -1) {
				refs = append(refs, strings.TrimSpace(m[1]))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	slices.Sort(refs)
	return slices.Compact(refs), nil
}

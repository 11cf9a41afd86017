package images

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Bundle is the file name of the archive that holds every image.
const Bundle = "images.tar"

// dockerManifest is one entry of a docker-archive's manifest.json.
type dockerManifest struct {
	Config   string
	RepoTags []string
	Layers   []string
}

// merge writes one docker-archive holding the images of every archive in
// ins. Their files are named by content (layers and configs by digest), so
// each is written once: the images share their bases' layers, and the node
// reads and unpacks each layer once instead of once per image.
func merge(out string, ins []string) error {
	tmp := out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	w := tar.NewWriter(f)
	seen := map[string]bool{}
	var manifest []dockerManifest
	for _, in := range ins {
		m, err := copyArchive(w, in, seen)
		if err != nil {
			f.Close()
			return fmt.Errorf("images: merging %s: %w", in, err)
		}
		manifest = append(manifest, m...)
	}
	data, err := json.Marshal(manifest)
	if err != nil {
		f.Close()
		return err
	}
	hdr := &tar.Header{Name: "manifest.json", Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}
	if err := w.WriteHeader(hdr); err != nil {
		f.Close()
		return err
	}
	if _, err := w.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := errors.Join(w.Close(), f.Close()); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}

// copyArchive copies the files of one docker-archive that are not in seen
// yet, and returns its manifest entries.
func copyArchive(w *tar.Writer, in string, seen map[string]bool) ([]dockerManifest, error) {
	f, err := os.Open(in)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := tar.NewReader(f)
	var manifest []dockerManifest
	for {
		hdr, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch {
		case hdr.Name == "manifest.json":
			if err := json.NewDecoder(r).Decode(&manifest); err != nil {
				return nil, fmt.Errorf("manifest.json: %w", err)
			}
		case hdr.Name == "repositories" || seen[hdr.Name]:
			// The legacy repositories file is rebuilt by nobody: manifest.json
			// has the tags.
		default:
			seen[hdr.Name] = true
			if err := w.WriteHeader(hdr); err != nil {
				return nil, err
			}
			if _, err := io.Copy(w, r); err != nil {
				return nil, err
			}
		}
	}
	if len(manifest) == 0 {
		return nil, errors.New("no manifest.json")
	}
	return manifest, nil
}

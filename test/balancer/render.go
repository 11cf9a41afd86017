package balancer

import (
	"bytes"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gatewall/gatewall/internal/graph"
	"github.com/gatewall/gatewall/internal/manager"
	"github.com/gatewall/gatewall/internal/manifest"
	"github.com/gatewall/gatewall/internal/nginx/config"
	"github.com/gatewall/gatewall/internal/render"
)

// These helpers are the only non-test code of the package: other
// harnesses that serve Gatewall's rendered configuration through real
// NGINX (test/datapath) render it the way these tests do.

// Decode is the manager's input of manifests (YAML documents), read as
// `gatewall render` reads them; a warning (an object it could not use)
// is an error here.
func Decode(text string) (*graph.Input, error) {
	objs, err := manifest.Decode([]byte(text))
	if err != nil {
		return nil, err
	}
	var warnings bytes.Buffer
	in, err := render.Decode(objs, manager.DefaultControllerName, "", &warnings)
	if err != nil {
		return nil, fmt.Errorf("decoding the manifests: %w", err)
	}
	if warnings.Len() > 0 {
		return nil, fmt.Errorf("decoding the manifests: %s", warnings.String())
	}
	return in, nil
}

// RenderManifests renders the one Gateway of text with the manager's
// pipeline (internal/render) and returns its files.
func RenderManifests(text string) ([]config.File, error) {
	in, err := Decode(text)
	if err != nil {
		return nil, err
	}
	res := render.Render(in, metav1.Now())
	for _, files := range res.Files {
		return files, nil
	}
	return nil, errors.New("the Gateway was not rendered")
}

package apis

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/rest"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gatewall/gatewall/internal/status"
)

// DefaultFieldDiscoveryInterval is how often the manager looks at the
// schemas the API server serves for the Gateway API's optional fields
// (status.Fields): a CRD replaced by another channel's changes the
// GatewayClass's supported features within this time.
const DefaultFieldDiscoveryInterval = 30 * time.Second

// fieldDiscovery finds which optional fields of the Gateway API's CRDs the
// cluster serves, in the OpenAPI v3 schemas the API server publishes for
// them (readable by every authenticated user: no right to read CRDs is
// needed). It fetches a group version's schema only when its URL, which
// carries the schema's hash, changed.
type fieldDiscovery struct {
	client openapi.Client
	apis   *Registry
	every  time.Duration
	log    logr.Logger
	// url and found are what the last fetch of the Gateway API's v1
	// schema saw.
	url   string
	found map[status.Requirement]bool
}

func newFieldDiscovery(cfg *rest.Config, apis *Registry, every time.Duration, log logr.Logger) (*fieldDiscovery, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("a discovery client: %w", err)
	}
	if every == 0 {
		every = DefaultFieldDiscoveryInterval
	}
	return &fieldDiscovery{client: dc.OpenAPIV3(), apis: apis, every: every, log: log}, nil
}

// gatewayV1Path is the OpenAPI v3 path of the Gateway API's v1 kinds.
var gatewayV1Path = "apis/" + gatewayv1.GroupVersion.String()

// discover looks once and records what it found.
func (d *fieldDiscovery) discover() error {
	paths, err := d.client.Paths()
	if err != nil {
		return fmt.Errorf("listing the API server's OpenAPI schemas: %w", err)
	}
	gv, ok := paths[gatewayV1Path]
	if !ok {
		d.url, d.found = "", map[status.Requirement]bool{} // no Gateway API v1 CRD served
		d.apis.SetFields(d.found)
		return nil
	}
	if u := gv.ServerRelativeURL(); u != d.url || d.found == nil {
		doc, err := gv.Schema(runtime.ContentTypeJSON)
		if err != nil {
			return fmt.Errorf("reading the OpenAPI schema of %s: %w", gatewayV1Path, err)
		}
		found, err := servedFields(doc, gatewayv1.GroupVersion.Group, gatewayv1.GroupVersion.Version, status.Fields())
		if err != nil {
			return err
		}
		d.url, d.found = u, found
	}
	d.apis.SetFields(d.found)
	return nil
}

// Start looks every interval until ctx ends; a failure is logged and the
// last finding kept.
func (d *fieldDiscovery) Start(ctx context.Context) error {
	t := time.NewTicker(d.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if err := d.discover(); err != nil {
			d.log.Error(err, "Looking for the Gateway API's optional fields")
		}
	}
}

// NeedLeaderElection is false: followers claim features too when they lead.
func (*fieldDiscovery) NeedLeaderElection() bool { return false }

// servedFields says, for each requirement, whether the OpenAPI v3 document
// of a group version has the field in the schema of its kind.
func servedFields(doc []byte, group, version string, reqs []status.Requirement) (map[status.Requirement]bool, error) {
	var d struct {
		Components struct {
			Schemas map[string]schemaNode `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("decoding the OpenAPI schema of %s/%s: %w", group, version, err)
	}
	kinds := map[string]*schemaNode{}
	for name := range d.Components.Schemas {
		s := d.Components.Schemas[name]
		for _, gvk := range s.GVK {
			if gvk.Group == group && gvk.Version == version {
				kinds[gvk.Kind] = &s
			}
		}
	}
	out := map[status.Requirement]bool{}
	for _, r := range reqs {
		out[r] = kinds[r.Kind].has(r.Field)
	}
	return out, nil
}

// schemaNode is the part of an OpenAPI v3 schema servedFields reads.
type schemaNode struct {
	Properties map[string]*schemaNode `json:"properties"`
	Items      *schemaNode            `json:"items"`
	GVK        []struct {
		Group   string `json:"group"`
		Version string `json:"version"`
		Kind    string `json:"kind"`
	} `json:"x-kubernetes-group-version-kind"`
}

// has says whether the schema has the field path ("spec.rules[].retry").
func (s *schemaNode) has(path string) bool {
	for _, part := range strings.Split(path, ".") {
		name, list := strings.CutSuffix(part, "[]")
		if s == nil {
			return false
		}
		s = s.Properties[name]
		if list {
			if s == nil {
				return false
			}
			s = s.Items
		}
	}
	return s != nil
}
